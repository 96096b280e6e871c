package session

import "fmt"

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

// dataOp runs op on the session's data store and answers it once what it
// wrote, or read, is durable (durable.go).
func (a *sessionActor) dataOp(op *dataOp) {
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
