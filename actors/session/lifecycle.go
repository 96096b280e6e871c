package session

import (
	"encoding/json/jsontext"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Info is what a session learnt at initialize. It never changes afterwards,
// so handlers share one copy.
type Info struct {
	ProtocolVersion    string
	ClientInfo         messages.Implementation
	ClientCapabilities messages.ClientCapabilities
}

// emptyResult is the exact `{}` that ping, logging/setLevel and
// resources/(un)subscribe answer.
var emptyResult = jsontext.Value(`{}`)

// initialize answers the initialize request and moves the session to
// pending.
func (a *sessionActor) initialize(req *messages.Message) ([]byte, *messages.Error) {
	if a.state != stateNew {
		return nil, messages.Errorf(messages.CodeInvalidRequest, "invalid request: the session is already initialized")
	}
	var p messages.InitializeParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	a.info = &Info{
		ProtocolVersion:    messages.NegotiateVersion(p.ProtocolVersion),
		ClientInfo:         p.ClientInfo,
		ClientCapabilities: p.Capabilities,
	}
	res, eerr := a.cfg.initResult(a.info.ProtocolVersion)
	if eerr != nil {
		return nil, messages.ErrInternal
	}
	frame, eerr := messages.EncodeResult(req.ID, res)
	if eerr != nil {
		return nil, messages.ErrInternal
	}
	a.state = statePending
	a.ref.info.Store(a.info)
	a.streams.prime = a.info.ProtocolVersion >= messages.Version20251125
	a.log.Debug("session initialized", "version", a.info.ProtocolVersion, "client", p.ClientInfo.Name)
	return frame, nil
}

// open handles notifications/initialized.
func (a *sessionActor) open() {
	if a.state != statePending {
		return
	}
	a.state = stateOpen
	a.table.Release()
	// Not persisted: a session is restored open once it was initialized
	// (restore), so a cluster writes one State per session set-up.
	if a.cfg.OnOpen != nil {
		a.cfg.OnOpen(a.ref)
	}
}

// decodeParams decodes request params (absent means {}) into v.
func decodeParams(raw jsontext.Value, v any) *messages.Error {
	return messages.DecodeParams(raw, v)
}
