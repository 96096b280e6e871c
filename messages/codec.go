package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The stable encoding of actor messages and stream events, for whatever
// carries them between nodes. Each is one JSON object:
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
// Empty members are left out. The JSON-RPC message inside is encoded and
// decoded as on the wire (Encode, Decode), so a message that reached a
// session once reaches it again unchanged. Names never change meaning; new
// members may be added, and decoders ignore members they do not know.

// ErrBadEncoding is returned, wrapped with the reason, by DecodeActorMessage
// and DecodeStreamEvent for input that is not an encoding they produce.
var ErrBadEncoding = errors.New("messages: bad actor message encoding")

// The type names of the encoded actor messages.
const (
	typeHandleRequest      = "handleRequest"
	typeHandleNotification = "handleNotification"
	typeDeliverResponse    = "deliverResponse"
	typeAttachStream       = "attachStream"
	typeDetachStream       = "detachStream"
	typeNotifyClient       = "notifyClient"
	typeDeleteSession      = "deleteSession"
	typeCloseSession       = "closeSession"
)

// wireStreamID is the encoding of a StreamID.
type wireStreamID struct {
	Node string `json:"node,omitempty"`
	N    uint64 `json:"n"`
}

// wireActorMessage is the encoding of every actor message.
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

// EncodeActorMessage encodes m for another node. It fails for a message
// whose JSON-RPC message or data is not valid.
func EncodeActorMessage(m ActorMessage) ([]byte, error) {
	var w wireActorMessage
	var err error
	switch m := m.(type) {
	case *HandleRequest:
		w.Type, w.Principal, w.Stream = typeHandleRequest, m.Principal, wireStream(m.Stream)
		w.Msg, err = encodeMsg(m.Msg)
	case *HandleNotification:
		w.Type, w.Principal = typeHandleNotification, m.Principal
		w.Msg, err = encodeMsg(m.Msg)
	case *DeliverResponse:
		w.Type, w.Principal = typeDeliverResponse, m.Principal
		w.Msg, err = encodeMsg(m.Msg)
	case *AttachStream:
		w.Type, w.Principal, w.Stream, w.LastEventID = typeAttachStream, m.Principal, wireStream(m.Stream), m.LastEventID
	case *DetachStream:
		w.Type, w.Stream = typeDetachStream, wireStream(m.Stream)
	case *NotifyClient:
		if !json.Valid(m.Data) {
			return nil, fmt.Errorf("%w: notifyClient data is not JSON", ErrBadEncoding)
		}
		w.Type, w.Data, w.URI = typeNotifyClient, m.Data, m.URI
	case *DeleteSession:
		w.Type, w.Principal = typeDeleteSession, m.Principal
	case *CloseSession:
		w.Type, w.Reason, w.GraceNs, w.Handover = typeCloseSession, m.Reason, int64(m.Grace), m.Handover
	default:
		return nil, fmt.Errorf("%w: unknown message type %T", ErrBadEncoding, m)
	}
	if err != nil {
		return nil, err
	}
	return marshalJSON(&w) // not json.Marshal: an ID like "<a>" must keep its bytes
}

// DecodeActorMessage decodes what EncodeActorMessage produced. It never
// panics; input it cannot read is ErrBadEncoding.
func DecodeActorMessage(data []byte) (ActorMessage, error) {
	var w wireActorMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	switch w.Type {
	case typeHandleRequest:
		msg, err := decodeMsg(w.Msg, KindRequest)
		if err != nil {
			return nil, err
		}
		return &HandleRequest{Principal: w.Principal, Msg: msg, Stream: w.Stream.id()}, nil
	case typeHandleNotification:
		msg, err := decodeMsg(w.Msg, KindNotification)
		if err != nil {
			return nil, err
		}
		return &HandleNotification{Principal: w.Principal, Msg: msg}, nil
	case typeDeliverResponse:
		msg, err := decodeMsg(w.Msg, KindResponse, KindError)
		if err != nil {
			return nil, err
		}
		return &DeliverResponse{Principal: w.Principal, Msg: msg}, nil
	case typeAttachStream:
		return &AttachStream{Principal: w.Principal, Stream: w.Stream.id(), LastEventID: w.LastEventID}, nil
	case typeDetachStream:
		return &DetachStream{Stream: w.Stream.id()}, nil
	case typeNotifyClient:
		if w.Data == nil {
			return nil, fmt.Errorf("%w: notifyClient without data", ErrBadEncoding)
		}
		return &NotifyClient{Data: w.Data, URI: w.URI}, nil
	case typeDeleteSession:
		return &DeleteSession{Principal: w.Principal}, nil
	case typeCloseSession:
		return &CloseSession{Reason: w.Reason, Grace: time.Duration(w.GraceNs), Handover: w.Handover}, nil
	}
	return nil, fmt.Errorf("%w: unknown type %q", ErrBadEncoding, w.Type)
}

func wireStream(id StreamID) *wireStreamID {
	if id == (StreamID{}) { // not IsZero: a node without a number must decode as it was
		return nil
	}
	return &wireStreamID{Node: id.Node, N: id.N}
}

func (w *wireStreamID) id() StreamID {
	if w == nil {
		return StreamID{}
	}
	return StreamID{Node: w.Node, N: w.N}
}

// encodeMsg encodes a message carried inside an actor message.
func encodeMsg(m *Message) (json.RawMessage, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no JSON-RPC message", ErrBadEncoding)
	}
	b, err := Encode(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	return b, nil
}

// decodeMsg decodes a message carried inside an actor message, which must
// be of one of kinds.
func decodeMsg(raw json.RawMessage, kinds ...Kind) (*Message, error) {
	if raw == nil {
		return nil, fmt.Errorf("%w: no JSON-RPC message", ErrBadEncoding)
	}
	m, derr := Decode(raw)
	if derr != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadEncoding, derr.Message)
	}
	k := m.Kind()
	for _, want := range kinds {
		if k == want {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: a %s where a %s belongs", ErrBadEncoding, k, kinds[0])
}

// wireStreamEvent is the encoding of a StreamEvent.
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

// EncodeStreamEvent encodes ev for the node that holds its stream.
func EncodeStreamEvent(ev StreamEvent) ([]byte, error) {
	w := wireStreamEvent{Stream: wireStreamID{Node: ev.Stream.Node, N: ev.Stream.N}, Signal: ev.Signal}
	if ev.Signal > SignalNotFound {
		return nil, fmt.Errorf("%w: unknown signal %d", ErrBadEncoding, ev.Signal)
	}
	if ev.Signal == SignalFrame {
		if ev.Frame.Data != nil && !json.Valid(ev.Frame.Data) {
			return nil, fmt.Errorf("%w: frame data is not JSON", ErrBadEncoding)
		}
		w.Frame = &wireFrame{EventID: ev.Frame.EventID, Data: ev.Frame.Data, End: ev.Frame.End}
	}
	return marshalJSON(&w) // not json.Marshal: a frame keeps the bytes the session wrote
}

// DecodeStreamEvent decodes what EncodeStreamEvent produced. It never
// panics; input it cannot read is ErrBadEncoding.
func DecodeStreamEvent(data []byte) (StreamEvent, error) {
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
