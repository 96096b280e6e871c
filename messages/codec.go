package messages

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The stable encoding of actor messages and stream events, for whatever
// carries them between nodes. Each is one binary envelope (codec_binary.go):
//
//	0x01                 format marker, version 1 (never the start of JSON)
//	4 bytes              length of the fields that follow, uint32 little-endian
//	fields               protocol buffers wire format, in any order
//
// The fields, each left out when zero, empty or nil:
//
//	 1 type         varint  the actor message: 1 handleRequest, 2 handleNotification,
//	                        3 deliverResponse, 4 attachStream, 5 detachStream,
//	                        6 notifyClient, 7 deleteSession, 8 closeSession
//	 2 principal    bytes   Principal
//	 3 stream node  bytes   Stream.Node
//	 4 stream n     varint  Stream.N
//	 5 lastEventId  bytes   AttachStream.LastEventID
//	 6 uri          bytes   NotifyClient.URI
//	 7 reason       bytes   CloseSession.Reason
//	 8 graceNs      varint  CloseSession.Grace in nanoseconds (an int64)
//	 9 handover     varint  CloseSession.Handover (0 or 1)
//	10 payload      bytes   the JSON-RPC message as Encode writes it
//	                        (handleRequest, handleNotification, deliverResponse),
//	                        NotifyClient.Data, or Frame.Data
//	11 signal       varint  StreamEvent.Signal
//	12 event id     bytes   Frame.EventID
//	13 end          varint  Frame.End (0 or 1)
//	14 stream boot  varint  Stream.Boot
//	15 session      bytes   StreamEvent.Session
//	16 traceparent  bytes   HandleRequest.Trace.Parent (W3C trace context)
//	17 tracestate   bytes   HandleRequest.Trace.State
//	18 epoch        varint  StreamEvent.Epoch
//
// An actor message has no signal, event id, end, session or epoch; a
// stream event has only fields 3, 4, 14, 15, 18 and 11, and 10, 12 and 13
// for SignalFrame. (Field 18 came with the edge's epoch check: a node
// before it skips it, and its events carry epoch 0, which the check lets
// through. Fields 16 and 17 came with tracing: a node before them skips them, and
// its requests carry no trace. Fields 14 and 15 came after the rest: an encoding without them has a
// zero boot and no session, which a stream registry refuses.) A frame's payload
// is absent for a priming event and otherwise never empty. Payloads and
// strings are bytes as they are: the JSON-RPC message inside is decoded as
// on the wire (Decode) at the receiver, and nothing else is scanned or
// rewritten, so a message or frame that reached a session once reaches it
// again unchanged. Field numbers never change meaning; new fields get new
// numbers, and decoders skip fields they do not know (a known field with
// another wire type is an error).
//
// Nodes of the release before this encoding sent one JSON object, which
// the decoders still accept (codec_json.go): input whose first byte other
// than JSON white space is '{'.
//
//	{"type":"handleRequest","principal":"p","stream":{"node":"n1","n":7},"msg":{…JSON-RPC…}}
//	{"type":"closeSession","reason":"…","graceNs":1000000,"handover":true}
//	stream event: {"stream":{…},"signal":0,"frame":{"id":"3-2","data":{…},"end":true}}

// ErrBadEncoding is returned, wrapped with the reason, by DecodeActorMessage
// and DecodeStreamEvent for input that is not an encoding they produce, and
// by EncodeActorMessage and EncodeStreamEvent for a message they cannot
// encode.
var ErrBadEncoding = errors.New("messages: bad actor message encoding")

// EncodeActorMessage encodes m for another node. It fails for a message
// without its JSON-RPC message or data, or whose JSON-RPC message is not
// valid. NotifyClient.Data is not checked: it is carried as it is.
func EncodeActorMessage(m ActorMessage) ([]byte, error) {
	var e envelope
	var err error
	switch m := m.(type) {
	case *HandleRequest:
		e.typ, e.principal = typeHandleRequest, m.Principal
		e.setStream(m.Stream)
		e.traceParent, e.traceState = m.Trace.Parent, m.Trace.State
		e.payload, err = encodeMsg(m.Msg)
	case *HandleNotification:
		e.typ, e.principal = typeHandleNotification, m.Principal
		e.payload, err = encodeMsg(m.Msg)
	case *DeliverResponse:
		e.typ, e.principal = typeDeliverResponse, m.Principal
		e.payload, err = encodeMsg(m.Msg)
	case *AttachStream:
		e.typ, e.principal, e.lastEventID = typeAttachStream, m.Principal, m.LastEventID
		e.setStream(m.Stream)
	case *DetachStream:
		e.typ = typeDetachStream
		e.setStream(m.Stream)
	case *NotifyClient:
		if len(m.Data) == 0 {
			return nil, fmt.Errorf("%w: notifyClient without data", ErrBadEncoding)
		}
		e.typ, e.payload, e.uri = typeNotifyClient, m.Data, m.URI
	case *DeleteSession:
		e.typ, e.principal = typeDeleteSession, m.Principal
	case *CloseSession:
		e.typ, e.reason, e.graceNs = typeCloseSession, m.Reason, uint64(m.Grace)
		e.handover = protowire.EncodeBool(m.Handover)
	default:
		return nil, fmt.Errorf("%w: unknown message type %T", ErrBadEncoding, m)
	}
	if err != nil {
		return nil, err
	}
	return e.encode()
}

// DecodeActorMessage decodes what EncodeActorMessage produced, or the JSON
// of the release before. It never panics; input it cannot read is
// ErrBadEncoding. The message shares memory with data (its JSON-RPC
// message or data is a slice of it): do not change data afterwards.
func DecodeActorMessage(data []byte) (ActorMessage, error) {
	if isJSONObject(data) {
		return decodeLegacyActorMessage(data)
	}
	var e envelope
	if err := e.decode(data); err != nil {
		return nil, err
	}
	return e.actorMessage()
}

// actorMessage returns the actor message e holds.
func (e *envelope) actorMessage() (ActorMessage, error) {
	switch e.typ {
	case typeHandleRequest:
		msg, err := decodeMsg(e.payload, KindRequest)
		if err != nil {
			return nil, err
		}
		return &HandleRequest{Principal: e.principal, Msg: msg, Stream: e.stream(), Trace: Trace{Parent: e.traceParent, State: e.traceState}}, nil
	case typeHandleNotification:
		msg, err := decodeMsg(e.payload, KindNotification)
		if err != nil {
			return nil, err
		}
		return &HandleNotification{Principal: e.principal, Msg: msg}, nil
	case typeDeliverResponse:
		msg, err := decodeMsg(e.payload, KindResponse, KindError)
		if err != nil {
			return nil, err
		}
		return &DeliverResponse{Principal: e.principal, Msg: msg}, nil
	case typeAttachStream:
		return &AttachStream{Principal: e.principal, Stream: e.stream(), LastEventID: e.lastEventID}, nil
	case typeDetachStream:
		return &DetachStream{Stream: e.stream()}, nil
	case typeNotifyClient:
		if len(e.payload) == 0 {
			return nil, fmt.Errorf("%w: notifyClient without data", ErrBadEncoding)
		}
		return &NotifyClient{Data: e.payload, URI: e.uri}, nil
	case typeDeleteSession:
		return &DeleteSession{Principal: e.principal}, nil
	case typeCloseSession:
		return &CloseSession{Reason: e.reason, Grace: time.Duration(e.graceNs), Handover: protowire.DecodeBool(e.handover)}, nil
	}
	return nil, fmt.Errorf("%w: unknown type %d", ErrBadEncoding, e.typ)
}

// EncodeStreamEvent encodes ev for the node that holds its stream. Only a
// SignalFrame event carries its frame. Frame.Data is not checked: it is
// carried as it is, but it must not be empty (nil is a priming event).
func EncodeStreamEvent(ev StreamEvent) ([]byte, error) {
	if ev.Signal > SignalNotFound {
		return nil, fmt.Errorf("%w: unknown signal %d", ErrBadEncoding, ev.Signal)
	}
	e := envelope{session: ev.Session, signal: uint64(ev.Signal), epoch: ev.Epoch}
	e.setStream(ev.Stream)
	if ev.Signal == SignalFrame {
		if ev.Frame.Data != nil && len(ev.Frame.Data) == 0 {
			return nil, fmt.Errorf("%w: empty frame data", ErrBadEncoding)
		}
		e.eventID, e.payload, e.end = ev.Frame.EventID, ev.Frame.Data, protowire.EncodeBool(ev.Frame.End)
	}
	return e.encode()
}

// DecodeStreamEvent decodes what EncodeStreamEvent produced, or the JSON
// of the release before. It never panics; input it cannot read is
// ErrBadEncoding. The frame's data is a slice of data: do not change data
// afterwards.
func DecodeStreamEvent(data []byte) (StreamEvent, error) {
	if isJSONObject(data) {
		return decodeLegacyStreamEvent(data)
	}
	var e envelope
	if err := e.decode(data); err != nil {
		return StreamEvent{}, err
	}
	return e.streamEvent()
}

// streamEvent returns the stream event e holds.
func (e *envelope) streamEvent() (StreamEvent, error) {
	if e.signal > uint64(SignalNotFound) {
		return StreamEvent{}, fmt.Errorf("%w: unknown signal %d", ErrBadEncoding, e.signal)
	}
	ev := StreamEvent{Stream: e.stream(), Session: e.session, Signal: StreamSignal(e.signal), Epoch: e.epoch}
	if ev.Signal == SignalFrame {
		if e.payload != nil && len(e.payload) == 0 {
			return StreamEvent{}, fmt.Errorf("%w: empty frame data", ErrBadEncoding)
		}
		ev.Frame = Frame{EventID: e.eventID, Data: e.payload, End: protowire.DecodeBool(e.end)}
	}
	return ev, nil
}

// encodeMsg encodes a message carried inside an actor message.
func encodeMsg(m *Message) ([]byte, error) {
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
func decodeMsg(raw []byte, kinds ...Kind) (*Message, error) {
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
