package messages

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Kind says which of the four JSON-RPC message shapes a Message has.
type Kind uint8

// The message kinds.
const (
	KindInvalid      Kind = iota
	KindRequest           // method and ID
	KindNotification      // method, no ID
	KindResponse          // ID and result
	KindError             // error (ID may be zero when the request was unreadable)
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	case KindError:
		return "error"
	}
	return "invalid"
}

// Message is one decoded JSON-RPC 2.0 message. Params and Result stay raw
// JSON until the receiver knows what type they should have. A Message is not
// mutated after it has been sent to an actor.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// Kind returns the message's shape.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && !m.ID.IsZero():
		return KindRequest
	case m.Method != "":
		return KindNotification
	case m.Error != nil:
		return KindError
	case m.Result != nil && !m.ID.IsZero():
		return KindResponse
	}
	return KindInvalid
}

// wireMessage is the decoding shape of a JSON-RPC message.
type wireMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// scanMessage checks that data is one JSON object and picks out its
// JSON-RPC members (the last one wins when a name repeats, as in
// encoding/json).
func scanMessage(data []byte, w *wireMessage) *Error {
	s := scanner{data: data}
	s.ws()
	if s.pos >= len(data) {
		return Errorf(CodeParseError, "parse error: unexpected end of JSON input")
	}
	var ok bool
	if data[s.pos] == '{' {
		ok = s.object(1, func(key, val []byte) {
			name := key[1 : len(key)-1]
			if bytes.IndexByte(name, '\\') >= 0 { // a name spelled with escapes
				k, _ := unquote(key)
				name = []byte(k)
			}
			w.set(name, val)
		})
	} else {
		ok = s.value(0)
		if ok {
			s.ws()
			if s.pos == len(data) {
				return Errorf(CodeInvalidRequest, "invalid request: a JSON-RPC message must be a JSON object")
			}
		}
	}
	if ok {
		s.ws()
		if s.pos != len(data) {
			s.fail("invalid character after top-level value")
			ok = false
		}
	}
	if !ok {
		return Errorf(CodeParseError, "parse error: %s", s.err.Error())
	}
	return nil
}

// set sets the member name stands for; other names are ignored.
func (w *wireMessage) set(name, val []byte) {
	switch string(name) {
	case "jsonrpc":
		w.JSONRPC = val
	case "id":
		w.ID = val
	case "method":
		w.Method = val
	case "params":
		w.Params = val
	case "result":
		w.Result = val
	case "error":
		w.Error = val
	}
}

// IsBatch reports whether data holds a JSON array, i.e. a JSON-RPC batch.
func IsBatch(data []byte) bool {
	s := scanner{data: data}
	s.ws()
	return s.pos < len(data) && data[s.pos] == '['
}

// Decode parses one JSON-RPC message. On failure it returns a -32700 error
// for bytes that are not JSON and a -32600 error for JSON that is not a valid
// message; the returned Message then carries the ID when one could be read,
// so the caller can answer it. Decode never panics.
//
// The Message's Params and Result are slices of data: the caller must not
// change data afterwards (hand Decode a copy of a reused buffer). Member
// names are matched exactly, as JSON-RPC defines them.
func Decode(data []byte) (*Message, *Error) {
	var w wireMessage
	if derr := scanMessage(data, &w); derr != nil {
		return nil, derr
	}
	m := &Message{}
	id, idErr := ParseID(w.ID)
	if idErr == nil {
		m.ID = id
	}
	if string(bytes.TrimSpace(w.JSONRPC)) != `"2.0"` {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if idErr != nil {
		return m, Errorf(CodeInvalidRequest, "invalid request: %v", idErr)
	}
	if isNull(w.Method) {
		return decodeResponse(m, &w)
	}
	if method, ok := unquote(w.Method); ok && method != "" {
		m.Method = method
	} else {
		return m, Errorf(CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	if w.Result != nil || w.Error != nil {
		return m, Errorf(CodeInvalidRequest, `invalid request: a request cannot carry "result" or "error"`)
	}
	if w.ID != nil && m.ID.IsZero() {
		return m, Errorf(CodeInvalidRequest, "invalid request: the id must not be null")
	}
	if !isNull(w.Params) {
		if c := firstByte(w.Params); c != '{' && c != '[' {
			return m, Errorf(CodeInvalidRequest, `invalid request: "params" must be an object`)
		}
		m.Params = w.Params
	}
	return m, nil
}

func decodeResponse(m *Message, w *wireMessage) (*Message, *Error) {
	hasResult, hasError := w.Result != nil, !isNull(w.Error)
	switch {
	case hasResult && hasError:
		return m, Errorf(CodeInvalidRequest, `invalid response: both "result" and "error" are set`)
	case hasError:
		var e Error
		if err := json.Unmarshal(w.Error, &e); err != nil {
			return m, Errorf(CodeInvalidRequest, `invalid response: "error" must be an object with an integer code and a message`)
		}
		m.Error = &e
	case hasResult:
		if m.ID.IsZero() {
			return m, Errorf(CodeInvalidRequest, "invalid response: a result needs an id")
		}
		m.Result = w.Result
	default:
		return m, Errorf(CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

func firstByte(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// jsonErrText keeps the parse error short and free of Go type names.
func jsonErrText(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return se.Error() + " at offset " + strconv.FormatInt(se.Offset, 10)
	}
	return "unexpected end of JSON input"
}

// DecodeBatch splits a JSON array into its raw elements, for the 2025-03-26
// revision, which allows batches. An empty array is an invalid request.
func DecodeBatch(data []byte) ([]json.RawMessage, *Error) {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		if !json.Valid(data) {
			return nil, Errorf(CodeParseError, "parse error: %s", jsonErrText(err))
		}
		return nil, Errorf(CodeInvalidRequest, "invalid request: a batch must be a JSON array")
	}
	if len(items) == 0 {
		return nil, Errorf(CodeInvalidRequest, "invalid request: empty batch")
	}
	return items, nil
}

// Marshal encodes v as JSON without HTML escaping. A json.RawMessage is used
// as it is.
func Marshal(v any) (json.RawMessage, error) {
	if a, ok := v.(appender); ok && !isNilPointer(v) {
		return a.appendJSON(make([]byte, 0, 256)) // most params fit: one allocation
	}
	switch r := v.(type) {
	case json.RawMessage:
		if r == nil {
			return json.RawMessage("{}"), nil
		}
		return r, nil
	case nil:
		return json.RawMessage("{}"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// isNilPointer reports whether v holds a nil pointer (which encodes as null).
func isNilPointer(v any) bool {
	switch p := v.(type) {
	case *CallToolResult:
		return p == nil
	case *TextContent:
		return p == nil
	case *ElicitParams:
		return p == nil
	case *CreateMessageParams:
		return p == nil
	case *SamplingMessage:
		return p == nil
	}
	return false
}

// EncodeResult encodes a result response for id.
func EncodeResult(id ID, result any) ([]byte, error) {
	if a, ok := result.(appender); ok && !isNilPointer(result) {
		b := make([]byte, 0, 128+len(id.raw))
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id.Raw()...)
		b = append(b, `,"result":`...)
		b, err := a.appendJSON(b)
		if err != nil {
			return nil, err
		}
		return append(b, '}'), nil
	}
	body, err := Marshal(result)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(body)+len(id.raw)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":`...)
	b = append(b, body...)
	return append(b, '}'), nil
}

// EncodeError encodes an error response for id (a zero id is written as null).
func EncodeError(id ID, e *Error) []byte {
	body, err := json.Marshal(e)
	if err != nil { // only a malformed Data can fail; drop it
		body, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	b := make([]byte, 0, len(body)+len(id.raw)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"error":`...)
	b = append(b, body...)
	return append(b, '}')
}

// EncodeRequest encodes a request; params may be nil.
func EncodeRequest(id ID, method string, params any) ([]byte, error) {
	return encodeCall(id, method, params)
}

// EncodeNotification encodes a notification; params may be nil.
func EncodeNotification(method string, params any) ([]byte, error) {
	return encodeCall(ID{}, method, params)
}

func encodeCall(id ID, method string, params any) ([]byte, error) {
	size := 160 + len(id.raw) + len(method)
	if raw, ok := params.(json.RawMessage); ok {
		size += len(raw)
	}
	b := make([]byte, 0, size)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		b = append(b, `"id":`...)
		b = append(b, id.raw...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		var err error
		if a, ok := params.(appender); ok && !isNilPointer(params) {
			b, err = a.appendJSON(b) // straight into the message: no second buffer
		} else {
			var body json.RawMessage
			body, err = Marshal(params)
			b = append(b, body...)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// Encode encodes m in whichever shape it has.
func Encode(m *Message) ([]byte, error) {
	switch m.Kind() {
	case KindRequest:
		return encodeCall(m.ID, m.Method, rawOrNil(m.Params))
	case KindNotification:
		return encodeCall(ID{}, m.Method, rawOrNil(m.Params))
	case KindResponse:
		return EncodeResult(m.ID, m.Result)
	case KindError:
		return EncodeError(m.ID, m.Error), nil
	}
	return nil, Errorf(CodeInvalidRequest, "cannot encode an invalid message")
}

func rawOrNil(r json.RawMessage) any {
	if r == nil {
		return nil
	}
	return r
}
