package messages

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file holds the binary envelope that actor messages and stream events
// cross nodes in; see codec.go for its layout.

// formatBinary is the first byte of the binary envelope, version 1. It is
// neither JSON white space nor '{', so no JSON object starts with it.
const formatBinary = 0x01

// EnvelopeFormat is the version of the envelope this release writes (the
// binary one); it reads that and version 0, the JSON object of the
// release before it (codec_json.go).
const EnvelopeFormat = formatBinary

// headerSize is the size of the format marker and the length of the fields.
const headerSize = 1 + 4

// The envelope's field numbers. They never change meaning.
const (
	fieldType        protowire.Number = 1
	fieldPrincipal   protowire.Number = 2
	fieldStreamNode  protowire.Number = 3
	fieldStreamN     protowire.Number = 4
	fieldLastEventID protowire.Number = 5
	fieldURI         protowire.Number = 6
	fieldReason      protowire.Number = 7
	fieldGraceNs     protowire.Number = 8
	fieldHandover    protowire.Number = 9
	fieldPayload     protowire.Number = 10
	fieldSignal      protowire.Number = 11
	fieldEventID     protowire.Number = 12
	fieldEnd         protowire.Number = 13
	fieldStreamBoot  protowire.Number = 14
	fieldSession     protowire.Number = 15
	fieldTraceParent protowire.Number = 16
	fieldTraceState  protowire.Number = 17
	fieldEpoch       protowire.Number = 18

	lastField = fieldEpoch
)

// The values of fieldType, one per actor message. 0 is no type.
const (
	typeHandleRequest uint64 = 1 + iota
	typeHandleNotification
	typeDeliverResponse
	typeAttachStream
	typeDetachStream
	typeNotifyClient
	typeDeleteSession
	typeCloseSession
)

// envelope holds the fields of one encoded actor message or stream event;
// a zero field is not written. Numbers are kept as they are on the wire.
type envelope struct {
	typ         uint64
	principal   string
	streamNode  string
	streamN     uint64
	lastEventID string
	uri         string
	reason      string
	graceNs     uint64 // an int64
	handover    uint64 // a bool
	payload     []byte // nil when absent
	signal      uint64
	eventID     string
	end         uint64 // a bool
	streamBoot  uint64
	session     string
	traceParent string
	traceState  string
	epoch       uint64
}

// field returns a pointer to the field num stands for: a *uint64 for a
// varint field, a *string or a *[]byte for a bytes field, nil for a number
// the envelope does not know.
func (e *envelope) field(num protowire.Number) any {
	switch num {
	case fieldType:
		return &e.typ
	case fieldPrincipal:
		return &e.principal
	case fieldStreamNode:
		return &e.streamNode
	case fieldStreamN:
		return &e.streamN
	case fieldLastEventID:
		return &e.lastEventID
	case fieldURI:
		return &e.uri
	case fieldReason:
		return &e.reason
	case fieldGraceNs:
		return &e.graceNs
	case fieldHandover:
		return &e.handover
	case fieldPayload:
		return &e.payload
	case fieldSignal:
		return &e.signal
	case fieldEventID:
		return &e.eventID
	case fieldEnd:
		return &e.end
	case fieldStreamBoot:
		return &e.streamBoot
	case fieldSession:
		return &e.session
	case fieldTraceParent:
		return &e.traceParent
	case fieldTraceState:
		return &e.traceState
	case fieldEpoch:
		return &e.epoch
	}
	return nil
}

func (e *envelope) stream() StreamID {
	return StreamID{Node: e.streamNode, Boot: e.streamBoot, N: e.streamN}
}

func (e *envelope) setStream(id StreamID) {
	e.streamNode, e.streamBoot, e.streamN = id.Node, id.Boot, id.N
}

// encode returns the envelope's encoding, in one allocation. It fails only
// for fields longer than the header can say (4 GiB).
func (e *envelope) encode() ([]byte, error) {
	size := headerSize
	for num := protowire.Number(1); num <= lastField; num++ {
		switch p := e.field(num).(type) {
		case *uint64:
			if *p != 0 {
				size += protowire.SizeTag(num) + protowire.SizeVarint(*p)
			}
		case *string:
			if *p != "" {
				size += protowire.SizeTag(num) + protowire.SizeBytes(len(*p))
			}
		case *[]byte:
			if *p != nil {
				size += protowire.SizeTag(num) + protowire.SizeBytes(len(*p))
			}
		}
	}
	if uint64(size-headerSize) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d bytes is too large", ErrBadEncoding, size)
	}
	b := make([]byte, headerSize, size)
	b[0] = formatBinary
	binary.LittleEndian.PutUint32(b[1:headerSize], uint32(size-headerSize))
	for num := protowire.Number(1); num <= lastField; num++ {
		switch p := e.field(num).(type) {
		case *uint64:
			if *p != 0 {
				b = protowire.AppendTag(b, num, protowire.VarintType)
				b = protowire.AppendVarint(b, *p)
			}
		case *string:
			if *p != "" {
				b = protowire.AppendTag(b, num, protowire.BytesType)
				b = protowire.AppendString(b, *p)
			}
		case *[]byte:
			if *p != nil {
				b = protowire.AppendTag(b, num, protowire.BytesType)
				b = protowire.AppendBytes(b, *p)
			}
		}
	}
	return b, nil
}

// decode reads an encoding into e, which must be zero. The payload is a
// slice of data. Fields it does not know are skipped; input that is
// truncated, carries more than its length says, or has a known field of
// another wire type is ErrBadEncoding.
func (e *envelope) decode(data []byte) error {
	if len(data) == 0 || data[0] != formatBinary {
		return fmt.Errorf("%w: neither the binary encoding nor a JSON object", ErrBadEncoding)
	}
	if len(data) < headerSize {
		return fmt.Errorf("%w: truncated header", ErrBadEncoding)
	}
	b := data[headerSize:]
	if n := binary.LittleEndian.Uint32(data[1:headerSize]); uint64(n) != uint64(len(b)) {
		return fmt.Errorf("%w: %d bytes of fields where the header says %d", ErrBadEncoding, len(b), n)
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrBadEncoding, protowire.ParseError(n))
		}
		b = b[n:]
		switch p := e.field(num).(type) {
		case nil: // a field of a later version
			n = protowire.ConsumeFieldValue(num, typ, b)
		case *uint64:
			if typ != protowire.VarintType {
				return fmt.Errorf("%w: field %d of wire type %d", ErrBadEncoding, num, typ)
			}
			*p, n = protowire.ConsumeVarint(b)
		case *string:
			if typ != protowire.BytesType {
				return fmt.Errorf("%w: field %d of wire type %d", ErrBadEncoding, num, typ)
			}
			*p, n = protowire.ConsumeString(b)
		case *[]byte:
			if typ != protowire.BytesType {
				return fmt.Errorf("%w: field %d of wire type %d", ErrBadEncoding, num, typ)
			}
			*p, n = protowire.ConsumeBytes(b)
			*p = slices.Clip(*p) // an append to it cannot write over what follows
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %v", ErrBadEncoding, num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}
