package cluster

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// entry is a session's directory entry: who owns it, since which
// takeover (epoch), and whose it is. It is written when a session is
// opened or taken over, never per message.
type entry struct {
	Session   string `json:"session"`
	Owner     string `json:"owner"`
	Epoch     uint64 `json:"epoch"`
	Principal string `json:"principal,omitempty"`

	known bool // Principal is known (read from the directory or the owner)
}

// record caches e and writes it to the directory without waiting for the
// write: opening a session does not wait for storage.
func (r *Router) record(e *entry) {
	if r.node.Standalone() {
		return // nobody will look it up, nor take it over
	}
	e.known = true
	r.dir.Store(e.Session, e)
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	m := &nats.Msg{Subject: r.node.subj.key("sessions", e.Session), Data: b}
	r.node.writeAsync(m, slog.LevelWarn, "writing the session directory", e.Session)
}

// Forget drops a session that has ended from the directory, without
// waiting for the write (the server calls it when one of this node's
// sessions closes). Its purge marker expires with the bucket's marker TTL,
// so the directory holds live sessions only.
func (r *Router) Forget(id string) {
	if r.node.Standalone() {
		return
	}
	r.dir.Delete(id)
	r.markEnded(id)
	for _, key := range []string{id, stateKey(id)} {
		m := nats.NewMsg(r.node.subj.key("sessions", key))
		m.Header.Set("KV-Operation", "PURGE")
		m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
		r.node.writeAsync(m, slog.LevelWarn, "removing a session from the directory", id, jetstream.WithMsgTTL(markerTTL))
	}
}

// markEnded remembers, for markerTTL, that session id ended here: its
// directory entry may outlive it for a moment (it is purged without
// waiting), and a message that arrives meanwhile must not start it again.
func (r *Router) markEnded(id string) {
	now := time.Now()
	r.gone.Store(id, now)
	if r.nGone.Add(1)%1024 == 0 {
		r.gone.Range(func(k, v any) bool {
			if now.Sub(v.(time.Time)) > markerTTL {
				r.gone.Delete(k)
			}
			return true
		})
	}
}

// ended reports whether session id ended here lately.
func (r *Router) ended(id string) bool {
	_, ok := r.gone.Load(id)
	return ok
}

// markerTTL is how long the directory keeps the marker of a session that
// ended.
const markerTTL = time.Minute
