package cluster

import (
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// The session directory: one key per session in the sessions bucket,
// holding its record — who owns it, since which takeover (the epoch),
// whose it is, and its durable State. Every write of a record is a
// compare-and-swap on the key's last revision (the first one, when
// initialize is answered, expects none), so writes of one session are
// serial, and a node that lost the session — taken over while its lease
// lapsed — has its next write refused instead of overwriting the new
// owner's. The revision is the fencing token: a takeover moves it on.
//
//	Open ──(no write)──▶ initialize: Persist, rev 0 → r1 ──▶ PutData: Persist r1 → r2 ──▶ …
//	takeover elsewhere: read r2, CAS owner=n2 epoch+1 → r3 ──▶ the old owner's Persist(r2) fails: it gives the session up
//	close: purge, expecting the last revision

// recordVersion is the format of a directory record.
const recordVersion = 1

// record is a session's directory record, as stored.
type record struct {
	V         int            `json:"v"`
	Session   string         `json:"session"`
	Owner     string         `json:"owner"`
	Epoch     uint64         `json:"epoch"`
	Principal string         `json:"principal,omitempty"`
	State     *session.State `json:"state,omitzero"`
}

// encode returns rec as stored. Map members are sorted, as encoding/json
// (v1) wrote them, so that a record's bytes depend on its content only.
func (rec *record) encode() ([]byte, error) {
	return json.Marshal(rec, json.Deterministic(true))
}

// entry is what this node knows of a session's record. Entries are
// immutable: a change stores a new one.
type entry struct {
	Session   string
	Owner     string
	Epoch     uint64
	Principal string
	rev       uint64 // revision of the record this node last read or wrote (0: none yet)
	known     bool   // Principal is known (read from the directory or the owner)
}

// ErrFenced reports a write refused because the session's record changed
// under its writer: another node took the session over.
var ErrFenced = errors.New("cluster: the session was taken over by another node")

// errStorage wraps a failure of the directory that may pass (no quorum,
// a leader election): the message may be tried again.
var errStorage = errors.New("cluster: the session directory cannot be reached")

// entryOf returns what this node knows of session id's record.
func (r *relay) entryOf(id string) *entry {
	if v, ok := r.dir.Load(id); ok {
		return v.(*entry)
	}
	return nil
}

// readRecord reads session id's record through the bucket's leader, each
// read bounded and tried again while storage is away for a moment, until
// ctx ends. ErrSessionNotFound's cause is jetstream.ErrKeyNotFound.
func (r *relay) readRecord(ctx context.Context, kv jetstream.KeyValue, id string) (*record, uint64, error) {
	var b backoff
	for {
		rctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
		kve, err := kv.Get(rctx, id)
		cancel()
		switch {
		case err == nil:
			var rec record
			if err := json.Unmarshal(kve.Value(), &rec); err != nil || rec.Session != id || rec.V > recordVersion {
				return nil, 0, fmt.Errorf("cluster: the directory record of session %s cannot be read", session.LogID(id))
			}
			return &rec, kve.Revision(), nil
		case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted), errors.Is(err, jetstream.ErrInvalidKey):
			return nil, 0, jetstream.ErrKeyNotFound
		case !r.storageRetry(ctx, &b, err):
			return nil, 0, fmt.Errorf("%w: %w", errStorage, err)
		}
	}
}

// storageRetry reports whether a storage operation that failed with err
// may be tried again: err may pass, ctx is not done, this node still acts,
// and either its last lease renewal succeeded or it reaches a majority of
// the others (a renewal also fails while a stream that lost its leader
// elects another, which takes seconds; a node whose storage has no quorum
// answers at once rather than wait for it).
func (r *relay) storageRetry(ctx context.Context, b *backoff, err error) bool {
	return r.node.acting() && (r.node.lease.healthy.Load() || r.node.reachesQuorum()) && b.retry(ctx, err)
}

// swapRecord writes rec over the revision rev of its key (0: the key must
// not exist) and returns the new revision; jetstream.ErrKeyExists when the
// record changed meanwhile.
func (r *relay) swapRecord(ctx context.Context, kv jetstream.KeyValue, rec *record, rev uint64) (uint64, error) {
	b, err := rec.encode()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
	defer cancel()
	m := r.recordMsg(rec.Session, b)
	ack, err := r.node.js.PublishMsg(ctx, m, r.recordOpts(rev)...)
	if err != nil {
		if isWrongRevision(err) {
			return 0, jetstream.ErrKeyExists
		}
		return 0, err
	}
	return ack.Sequence, nil
}

// recordMsg is the write of a record's bytes.
func (r *relay) recordMsg(id string, b []byte) *nats.Msg {
	return &nats.Msg{Subject: r.node.subj.key("sessions", id), Data: b, Header: nats.Header{}}
}

// recordOpts are the options of a record's write over revision rev: the
// compare-and-swap, and the record's time to live.
func (r *relay) recordOpts(rev uint64) []jetstream.PublishOpt {
	opts := []jetstream.PublishOpt{jetstream.WithExpectLastSequencePerSubject(rev)}
	if ttl := r.recordTTL.Load(); ttl > 0 {
		opts = append(opts, jetstream.WithMsgTTL(time.Duration(ttl)))
	}
	return opts
}

// isWrongRevision reports whether a write failed on its compare-and-swap
// (as a raw publish, or through the key-value API, which reports it in
// several ways: 10071, or 10164 on a replicated stream).
func isWrongRevision(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// SetRecordTTL makes every directory record expire ttl after it was last
// written (0: never): the record of a session whose node died, and that
// nobody touched again, is removed then. Sessions write their record again
// while they are in use (session.Config.Refresh), so set it above the
// sessions' idle timeout.
func (r *relay) SetRecordTTL(ttl time.Duration) {
	if ttl > 0 {
		ttl = max(ttl, time.Second) // JetStream's resolution
	}
	r.recordTTL.Store(int64(ttl))
}

// Forget drops a session that has ended from the directory, without
// waiting for the write (the server calls it when one of this node's
// sessions closes). The purge expects the record's last revision this node
// knows: it removes nothing that another node wrote. Its marker expires
// with the bucket's marker TTL, so the directory holds live sessions only.
func (r *relay) Forget(id string) {
	if r.node.Standalone() {
		return
	}
	e := r.entryOf(id)
	r.dir.Delete(id)
	r.markEnded(id)
	if e == nil || e.rev == 0 || e.Owner != r.node.ID() || !r.node.acting() {
		return // never written, or not this node's to remove
	}
	m := nats.NewMsg(r.node.subj.key("sessions", id))
	m.Header.Set("KV-Operation", "PURGE")
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	r.node.writeAsync(m, "removing a session from the directory", id,
		jetstream.WithExpectLastSequencePerSubject(e.rev), jetstream.WithMsgTTL(markerTTL))
}

// markEnded remembers, for markerTTL, that session id ended here: its
// directory entry may outlive it for a moment (it is purged without
// waiting), and a message that arrives meanwhile must not start it again.
func (r *relay) markEnded(id string) {
	now := time.Now()
	r.endedAt.Store(id, now)
	if r.nEnded.Add(1)%1024 == 0 {
		r.endedAt.Range(func(k, v any) bool {
			if now.Sub(v.(time.Time)) > markerTTL {
				r.endedAt.Delete(k)
			}
			return true
		})
	}
}

// ended reports whether session id ended here lately.
func (r *relay) ended(id string) bool {
	_, ok := r.endedAt.Load(id)
	return ok
}

// markerTTL is how long the directory keeps the marker of a session that
// ended.
const markerTTL = time.Minute
