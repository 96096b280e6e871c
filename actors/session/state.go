package session

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// State is what a session must keep to survive the loss of the node that
// runs it: what it learnt at initialize (a restored session is open),
// what the client set (log level, subscriptions), its data store, and a
// mark of the catalog it was told of. A cluster
// keeps the last State of every session it owns durable (Config.Persist)
// and spawns a session from it on another node (SpawnOptions.Restore).
// Handlers' roots listeners are code and are not kept: a restored session
// has none.
type State struct {
	Principal          string                      `json:"principal,omitempty"`
	ProtocolVersion    string                      `json:"protocolVersion"`
	ClientInfo         messages.Implementation     `json:"clientInfo"`
	ClientCapabilities messages.ClientCapabilities `json:"clientCapabilities"`
	LogLevel           messages.LoggingLevel       `json:"logLevel,omitempty"`
	Subscriptions      []string                    `json:"subscriptions,omitempty"`
	Data               map[string][]byte           `json:"data,omitempty"`
	// Mark is what the server knew of the catalog the session had been
	// told of when the State was written (Config.Mark).
	Mark map[string]string `json:"mark,omitempty"`
	// Running are the IDs of the client requests whose handlers ran when
	// the State was written. One of them delivered again to a restored
	// session (its node was lost before it answered) may have taken effect
	// already: it is answered with an error, not run twice.
	Running []messages.ID `json:"running,omitempty"`

	// Events is the session's event log as the cluster kept it (see
	// Config.LogEvent), for a restored session; it is not part of the
	// State given to Config.Persist.
	Events []LoggedEvent `json:"-"`
}

// snapshot returns the actor's State. Call it on the actor.
func (a *sessionActor) snapshot() *State {
	st := &State{
		Principal:     a.principal,
		LogLevel:      a.logLevel,
		Subscriptions: slices.Sorted(maps.Keys(a.subs)),
		Data:          maps.Clone(a.data.m),
	}
	for id := range a.inflight {
		st.Running = append(st.Running, id)
	}
	slices.SortFunc(st.Running, func(x, y messages.ID) int { return strings.Compare(x.Raw(), y.Raw()) })
	if a.info != nil {
		st.ProtocolVersion = a.info.ProtocolVersion
		st.ClientInfo = a.info.ClientInfo
		st.ClientCapabilities = a.info.ClientCapabilities
	}
	if a.cfg.Mark != nil {
		st.Mark = a.cfg.Mark(st.Subscriptions)
	}
	return st
}

// restore puts the actor in st's state: initialized and open, with the
// client's level, subscriptions and data.
func (a *sessionActor) restore(st *State) {
	if st.ProtocolVersion == "" {
		return // the session was not initialized yet
	}
	a.info = &Info{
		ProtocolVersion:    st.ProtocolVersion,
		ClientInfo:         st.ClientInfo,
		ClientCapabilities: st.ClientCapabilities,
	}
	a.ref.info.Store(a.info)
	a.streams.prime = a.info.ProtocolVersion >= messages.Version20251125
	if st.LogLevel != "" && st.LogLevel.Valid() {
		a.logLevel, a.logRank = st.LogLevel, st.LogLevel.Rank()
	}
	for _, uri := range st.Subscriptions {
		if a.subs == nil {
			a.subs = make(map[string]struct{}, len(st.Subscriptions))
		}
		a.subs[uri] = struct{}{}
	}
	for k, v := range st.Data {
		_ = a.data.put(k, v, a.lim)
	}
	a.streams.restore(st.Events)
	for _, id := range st.Running {
		if a.ranBefore == nil {
			a.ranBefore = make(map[messages.ID]struct{}, len(st.Running))
		}
		a.ranBefore[id] = struct{}{}
	}
	// Open, though the State was written before notifications/initialized
	// (open does not write it): the client sends it right after
	// initialize's answer, and the node that got it may be the one that
	// was lost. A pending session would hold its requests to the client
	// for an initialized that does not come again.
	a.state = stateOpen
	a.table.Release()
	a.durable.written = time.Now() // the takeover wrote the record
	a.restored = st                // announced once the actor runs (started)
}

// announce tells the server of a restored session (broadcasts reach it,
// as any open session) and catches it up on what changed while it had no
// node. Called once the actor runs, so that the Ref it hands out can be
// sent to.
func (a *sessionActor) announce(st *State) {
	if a.cfg.OnOpen != nil {
		a.cfg.OnOpen(a.ref)
	}
	if a.cfg.CatchUp != nil {
		for _, m := range a.cfg.CatchUp(st.Mark) {
			a.notifyClient(m)
		}
	}
}
