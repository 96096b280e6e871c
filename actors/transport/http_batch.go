package transport

import (
	"net/http"

	"github.com/mcp-actors/mcp-actors/messages"
)

// serveBatch handles a JSON-RPC batch, which only revision 2025-03-26
// allows (a missing MCP-Protocol-Version header means 2025-03-26). Its
// notifications and responses are delivered at once; its requests are
// answered on one SSE stream that ends when every one has been answered.
func (h *HTTPHandler) serveBatch(w http.ResponseWriter, r *http.Request, principal, version string, body []byte) {
	if version != messages.Version20250326 && version != messages.Version20241105 {
		writeJSON(w, http.StatusBadRequest, messages.EncodeError(messages.ID{}, messages.Errorf(messages.CodeInvalidRequest,
			"invalid request: JSON-RPC batches are not supported in protocol %s", version)))
		return
	}
	items, derr := messages.DecodeBatch(body)
	if derr != nil {
		writeJSON(w, http.StatusBadRequest, messages.EncodeError(messages.ID{}, derr))
		return
	}
	ref, ok := h.session(w, r, principal)
	if !ok {
		return
	}
	wake := make(chan struct{}, 1)
	var sinks []*httpSink
	var early []messages.Frame // answers to items that could not be decoded
	for _, raw := range items {
		m, derr := messages.Decode(raw)
		switch {
		case derr != nil:
			early = append(early, messages.Frame{Data: messages.EncodeError(idOf(m), derr), End: true})
		case m.Kind() == messages.KindRequest && m.Method == messages.MethodInitialize:
			early = append(early, messages.Frame{Data: messages.EncodeError(m.ID, messages.Errorf(messages.CodeInvalidRequest,
				"invalid request: initialize cannot be part of a batch")), End: true})
		case m.Kind() == messages.KindRequest:
			s := newHTTPSink(h.opts.StreamQueue)
			s.wake = wake
			sinks = append(sinks, s)
			ref.Send(&messages.HandleRequest{Msg: m, Sink: s})
		case m.Kind() == messages.KindNotification:
			ref.Send(&messages.HandleNotification{Msg: m})
		default:
			ref.Send(&messages.DeliverResponse{Msg: m})
		}
	}
	if len(sinks) == 0 && len(early) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sse := newSSEWriter(w, &h.opts)
	if err := sse.start(w.Header()); err != nil {
		h.detachAll(ref, sinks)
		return
	}
	if len(early) > 0 {
		if _, err := sse.write(early); err != nil {
			h.detachAll(ref, sinks)
			return
		}
	}
	for len(sinks) > 0 {
		select {
		case <-wake:
		case <-r.Context().Done():
			h.detachAll(ref, sinks)
			return
		}
		open := sinks[:0]
		for _, s := range sinks {
			frames, closed := s.take()
			end := false
			if len(frames) > 0 {
				var err error
				if end, err = sse.write(frames); err != nil {
					h.detachAll(ref, sinks)
					return
				}
			}
			if !end && !closed {
				open = append(open, s)
			}
		}
		sinks = open
	}
}

func (h *HTTPHandler) detachAll(ref interface{ Send(messages.ActorMessage) }, sinks []*httpSink) {
	for _, s := range sinks {
		ref.Send(&messages.DetachStream{Sink: s})
	}
}
