package messages

import (
	"encoding/json"
	"fmt"
	"time"
)

// This file decodes the JSON encoding that nodes of the release before the
// binary envelope send, so that a cluster can be upgraded one node at a
// time. Nothing encodes it any more; once no such node can be running, the
// file can go. Each actor message or stream event is one JSON object:
//
//	{"type":"handleRequest","principal":"p","stream":{"node":"n1","n":7},"msg":{…JSON-RPC…}}
//	{"type":"handleNotification","principal":"p","msg":{…}}
//	{"type":"deliverResponse","principal":"p","msg":{…}}
//	{"type":"attachStream","principal":"p","stream":{…},"lastEventId":"3-2"}
//	{"type":"detachStream","stream":{…}}
//	{"type":"notifyClient","data":{…JSON-RPC…},"uri":"test://x"}
//	{"type":"deleteSession","principal":"p"}
//	{"type":"closeSession","reason":"…","graceNs":1000000,"handover":true}
//	stream event: {"stream":{…},"signal":0,"frame":{"id":"3-2","data":{…},"end":true}}
//
// Empty members are left out; decoders ignore members they do not know.

// The type names of the JSON-encoded actor messages.
const (
	legacyHandleRequest      = "handleRequest"
	legacyHandleNotification = "handleNotification"
	legacyDeliverResponse    = "deliverResponse"
	legacyAttachStream       = "attachStream"
	legacyDetachStream       = "detachStream"
	legacyNotifyClient       = "notifyClient"
	legacyDeleteSession      = "deleteSession"
	legacyCloseSession       = "closeSession"
)

// isJSONObject reports whether data's first byte other than JSON white
// space is '{': the JSON encoding, not the binary one.
func isJSONObject(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// wireStreamID is the JSON encoding of a StreamID.
type wireStreamID struct {
	Node string `json:"node,omitempty"`
	N    uint64 `json:"n"`
}

func (w *wireStreamID) id() StreamID {
	if w == nil {
		return StreamID{}
	}
	return StreamID{Node: w.Node, N: w.N}
}

// wireActorMessage is the JSON encoding of every actor message.
type wireActorMessage struct {
	Type        string          `json:"type"`
	Principal   string          `json:"principal,omitempty"`
	Stream      *wireStreamID   `json:"stream,omitempty"`
	Msg         json.RawMessage `json:"msg,omitempty"`
	LastEventID string          `json:"lastEventId,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	URI         string          `json:"uri,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	GraceNs     int64           `json:"graceNs,omitempty"`
	Handover    bool            `json:"handover,omitempty"`
}

// decodeLegacyActorMessage decodes the JSON encoding of an actor message.
func decodeLegacyActorMessage(data []byte) (ActorMessage, error) {
	var w wireActorMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	switch w.Type {
	case legacyHandleRequest:
		msg, err := decodeMsg(w.Msg, KindRequest)
		if err != nil {
			return nil, err
		}
		return &HandleRequest{Principal: w.Principal, Msg: msg, Stream: w.Stream.id()}, nil
	case legacyHandleNotification:
		msg, err := decodeMsg(w.Msg, KindNotification)
		if err != nil {
			return nil, err
		}
		return &HandleNotification{Principal: w.Principal, Msg: msg}, nil
	case legacyDeliverResponse:
		msg, err := decodeMsg(w.Msg, KindResponse, KindError)
		if err != nil {
			return nil, err
		}
		return &DeliverResponse{Principal: w.Principal, Msg: msg}, nil
	case legacyAttachStream:
		return &AttachStream{Principal: w.Principal, Stream: w.Stream.id(), LastEventID: w.LastEventID}, nil
	case legacyDetachStream:
		return &DetachStream{Stream: w.Stream.id()}, nil
	case legacyNotifyClient:
		if w.Data == nil {
			return nil, fmt.Errorf("%w: notifyClient without data", ErrBadEncoding)
		}
		return &NotifyClient{Data: w.Data, URI: w.URI}, nil
	case legacyDeleteSession:
		return &DeleteSession{Principal: w.Principal}, nil
	case legacyCloseSession:
		return &CloseSession{Reason: w.Reason, Grace: time.Duration(w.GraceNs), Handover: w.Handover}, nil
	}
	return nil, fmt.Errorf("%w: unknown type %q", ErrBadEncoding, w.Type)
}

// wireStreamEvent is the JSON encoding of a StreamEvent.
type wireStreamEvent struct {
	Stream wireStreamID `json:"stream"`
	Signal StreamSignal `json:"signal"`
	Frame  *wireFrame   `json:"frame,omitempty"`
}

type wireFrame struct {
	EventID string          `json:"id,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	End     bool            `json:"end,omitempty"`
}

// decodeLegacyStreamEvent decodes the JSON encoding of a stream event.
func decodeLegacyStreamEvent(data []byte) (StreamEvent, error) {
	var w wireStreamEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return StreamEvent{}, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	if w.Signal > SignalNotFound {
		return StreamEvent{}, fmt.Errorf("%w: unknown signal %d", ErrBadEncoding, w.Signal)
	}
	ev := StreamEvent{Stream: w.Stream.id(), Signal: w.Signal}
	if w.Signal == SignalFrame {
		if w.Frame == nil {
			return StreamEvent{}, fmt.Errorf("%w: a frame event without a frame", ErrBadEncoding)
		}
		ev.Frame = Frame{EventID: w.Frame.EventID, Data: w.Frame.Data, End: w.Frame.End}
	}
	return ev, nil
}
