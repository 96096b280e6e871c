package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
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

// legacyTypes maps the type names of the JSON-encoded actor messages to
// the binary envelope's types: a JSON message is decoded as the envelope
// it would be (envelope.actorMessage).
var legacyTypes = map[string]uint64{
	"handleRequest":      typeHandleRequest,
	"handleNotification": typeHandleNotification,
	"deliverResponse":    typeDeliverResponse,
	"attachStream":       typeAttachStream,
	"detachStream":       typeDetachStream,
	"notifyClient":       typeNotifyClient,
	"deleteSession":      typeDeleteSession,
	"closeSession":       typeCloseSession,
}

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

// wireActorMessage is the JSON encoding of every actor message.
type wireActorMessage struct {
	Type        string         `json:"type"`
	Principal   string         `json:"principal,omitempty"`
	Stream      *wireStreamID  `json:"stream,omitzero"`
	Msg         jsontext.Value `json:"msg,omitempty"`
	LastEventID string         `json:"lastEventId,omitempty"`
	Data        jsontext.Value `json:"data,omitempty"`
	URI         string         `json:"uri,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	GraceNs     int64          `json:"graceNs,omitzero"`
	Handover    bool           `json:"handover,omitzero"`
}

// decodeLegacyActorMessage decodes the JSON encoding of an actor message.
func decodeLegacyActorMessage(data []byte) (ActorMessage, error) {
	var w wireActorMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	typ, ok := legacyTypes[w.Type]
	if !ok {
		return nil, fmt.Errorf("%w: unknown type %q", ErrBadEncoding, w.Type)
	}
	e := envelope{typ: typ, principal: w.Principal, lastEventID: w.LastEventID, uri: w.URI, reason: w.Reason,
		graceNs: uint64(w.GraceNs), handover: protowire.EncodeBool(w.Handover), payload: w.Msg}
	if w.Stream != nil {
		e.streamNode, e.streamN = w.Stream.Node, w.Stream.N
	}
	if typ == typeNotifyClient {
		e.payload = w.Data
	}
	return e.actorMessage()
}

// wireStreamEvent is the JSON encoding of a StreamEvent.
type wireStreamEvent struct {
	Stream wireStreamID `json:"stream"`
	Signal StreamSignal `json:"signal"`
	Frame  *wireFrame   `json:"frame,omitzero"`
}

type wireFrame struct {
	EventID string         `json:"id,omitempty"`
	Data    jsontext.Value `json:"data,omitempty"`
	End     bool           `json:"end,omitzero"`
}

// decodeLegacyStreamEvent decodes the JSON encoding of a stream event.
func decodeLegacyStreamEvent(data []byte) (StreamEvent, error) {
	var w wireStreamEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return StreamEvent{}, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	e := envelope{streamNode: w.Stream.Node, streamN: w.Stream.N, signal: uint64(w.Signal)}
	if w.Signal == SignalFrame {
		if w.Frame == nil {
			return StreamEvent{}, fmt.Errorf("%w: a frame event without a frame", ErrBadEncoding)
		}
		e.eventID, e.payload, e.end = w.Frame.EventID, w.Frame.Data, protowire.EncodeBool(w.Frame.End)
	}
	return e.streamEvent()
}
