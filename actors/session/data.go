package session

import (
	"encoding/base64"
	json "encoding/json/v2"
	"fmt"
)

type dataOpKind uint8

const (
	dataPut dataOpKind = iota
	dataGet
	dataDelete
)

type dataReply struct {
	value []byte
	found bool
	err   error
}

// dataStore is the session's bounded key/value store.
type dataStore struct {
	m     map[string][]byte
	bytes int
}

// apply runs op and returns its reply, and whether the store changed.
func (d *dataStore) apply(op *dataOp, lim Limits) (r dataReply, changed bool) {
	switch op.op {
	case dataGet:
		r.value, r.found = d.m[op.key]
	case dataDelete:
		if v, ok := d.m[op.key]; ok {
			d.bytes -= len(op.key) + len(v)
			delete(d.m, op.key)
			changed = true
		}
	case dataPut:
		r.err = d.put(op.key, op.value, lim)
		changed = r.err == nil
	}
	return r, changed
}

// runDataOp runs op on the session's data store and answers it once what it
// wrote, or read, is durable (durable.go).
func (a *sessionActor) runDataOp(op *dataOp) {
	r, changed := a.data.apply(op, a.lim)
	answer := func(err error) {
		if err != nil {
			r = dataReply{err: err}
		}
		op.reply <- r
	}
	switch {
	case r.err != nil:
		op.reply <- r
	case changed:
		a.persist(answer)
	default:
		a.afterDurable(answer)
	}
}

func (d *dataStore) put(key string, value []byte, lim Limits) error {
	if len(key) == 0 || len(key) > lim.MaxKeyBytes {
		return fmt.Errorf("%w: a key must have 1 to %d bytes", ErrDataLimit, lim.MaxKeyBytes)
	}
	old, exists := d.m[key]
	size := d.bytes + len(key) + len(value)
	if exists {
		size -= len(key) + len(old)
	} else if len(d.m) >= lim.MaxDataKeys {
		return fmt.Errorf("%w: at most %d keys", ErrDataLimit, lim.MaxDataKeys)
	}
	if size > lim.MaxDataBytes {
		return fmt.Errorf("%w: at most %d bytes in all", ErrDataLimit, lim.MaxDataBytes)
	}
	if d.m == nil {
		d.m = make(map[string][]byte)
	}
	d.m[key] = value
	d.bytes = size
	return nil
}

// stateSize returns the size of the session's State, encoded as JSON, with
// value stored under key: exact, or one byte more. Call it on the actor.
func (a *sessionActor) stateSize(key string, value []byte) (int, error) {
	st := a.snapshot()
	st.Data = nil
	rest, err := json.Marshal(st)
	if err != nil {
		return 0, fmt.Errorf("session: encoding the session's state: %w", err)
	}
	size := len(rest) + len(`,"data":{}`) + dataMembersSize(a.data.m) + dataMemberSize(key, value)
	if old, ok := a.data.m[key]; ok {
		size -= dataMemberSize(key, old)
	}
	return size, nil
}

// dataMembersSize is the size of the JSON members of m as State encodes
// its Data ("key":"base64 value", each with a comma, the last one's
// counted too).
func dataMembersSize(m map[string][]byte) int {
	n := 0
	for k, v := range m {
		n += dataMemberSize(k, v)
	}
	return n
}

// dataMemberSize is the size of one member of State's Data as JSON, with
// its comma.
func dataMemberSize(key string, value []byte) int {
	k, _ := json.Marshal(key) // a string always encodes
	return len(k) + len(`:"",`) + base64.StdEncoding.EncodedLen(len(value))
}

// stateFits reports whether the session's State, encoded, would stay
// within Limits.MaxStateBytes with value stored under key: nil, or an
// ErrDataLimit that says how large it would be. Call it on the actor.
func (a *sessionActor) stateFits(key string, value []byte) error {
	size, err := a.stateSize(key, value)
	if err != nil {
		return err
	}
	if size > a.lim.MaxStateBytes {
		return fmt.Errorf("%w: with %d bytes under %q the session's durable state would take %d bytes (values count base64-encoded, 4/3 of their size); it must fit in %d bytes",
			ErrDataLimit, len(value), key, size, a.lim.MaxStateBytes)
	}
	return nil
}
