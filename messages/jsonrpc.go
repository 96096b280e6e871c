package messages

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"strings"
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
	Params jsontext.Value
	Result jsontext.Value
	Error  *Error

	// received is the message as Decode read it, so that it crosses a
	// node as the client sent it (Encode returns it); nil for a Message
	// built in Go.
	received []byte
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

// wireMessage is the decoding shape of a JSON-RPC message: every member
// raw, so that each gets its own error.
type wireMessage struct {
	JSONRPC jsontext.Value `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  jsontext.Value `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   jsontext.Value `json:"error"`
}

// IsBatch reports whether data holds a JSON array, i.e. a JSON-RPC batch.
func IsBatch(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// Decode parses one JSON-RPC message. On failure it returns a -32700 error
// for bytes that are not JSON and a -32600 error for JSON that is not a valid
// message; the returned Message then carries the ID when one could be read,
// so the caller can answer it. Decode never panics.
//
// The Message remembers data (Encode returns it as it is): the caller must
// not change data afterwards (hand Decode a copy of a reused buffer).
// Member names are matched exactly, as JSON-RPC defines them; a name given
// twice is a parse error.
func Decode(data []byte) (*Message, *Error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		if _, syntax := errors.AsType[*jsontext.SyntacticError](err); syntax || !jsontext.Value(data).IsValid() {
			return nil, Errorf(CodeParseError, "parse error: %s", jsonErrText(err))
		}
		return nil, Errorf(CodeInvalidRequest, "invalid request: a JSON-RPC message must be a JSON object")
	}
	m := &Message{received: data}
	id, idErr := ParseID(w.ID)
	if idErr == nil {
		m.ID = id
	}
	if string(w.JSONRPC) != `"2.0"` {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if idErr != nil {
		return m, Errorf(CodeInvalidRequest, "invalid request: %v", idErr)
	}
	if isNull(w.Method) {
		return decodeResponse(m, &w)
	}
	if w.Method.Kind() != '"' || json.Unmarshal(w.Method, &m.Method) != nil || m.Method == "" {
		return m, Errorf(CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	if w.Result != nil || w.Error != nil {
		return m, Errorf(CodeInvalidRequest, `invalid request: a request cannot carry "result" or "error"`)
	}
	if w.ID != nil && m.ID.IsZero() {
		return m, Errorf(CodeInvalidRequest, "invalid request: the id must not be null")
	}
	if !isNull(w.Params) {
		if k := w.Params.Kind(); k != '{' && k != '[' {
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

func isNull(raw jsontext.Value) bool {
	return raw == nil || raw.Kind() == 'n'
}

// jsonErrText keeps a parse error short and free of Go type names.
func jsonErrText(err error) string {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return strings.TrimPrefix(se.Error(), "jsontext: ")
	}
	return "unexpected end of JSON input"
}

// DecodeBatch splits a JSON array into its raw elements, for the 2025-03-26
// revision, which allows batches. An empty array is an invalid request.
func DecodeBatch(data []byte) ([]jsontext.Value, *Error) {
	var items []jsontext.Value
	if err := json.Unmarshal(data, &items); err != nil {
		if _, syntax := errors.AsType[*jsontext.SyntacticError](err); syntax {
			return nil, Errorf(CodeParseError, "parse error: %s", jsonErrText(err))
		}
		return nil, Errorf(CodeInvalidRequest, "invalid request: a batch must be a JSON array")
	}
	if len(items) == 0 {
		return nil, Errorf(CodeInvalidRequest, "invalid request: empty batch")
	}
	return items, nil
}

// encodeOptions are the options of everything this package writes: a Go
// string with invalid UTF-8 (a tool's output, say) is written with U+FFFD
// in its place rather than failing the message, and a map's members are
// sorted, so that equal values encode alike (as encoding/json v1 did).
var encodeOptions = json.JoinOptions(jsontext.AllowInvalidUTF8(true), json.Deterministic(true))

// Marshal encodes v as compact JSON (no HTML escaping). A jsontext.Value
// is used as it is; nil encodes as {}.
func Marshal(v any) (jsontext.Value, error) {
	switch r := v.(type) {
	case jsontext.Value:
		if r == nil {
			return jsontext.Value("{}"), nil
		}
		return r, nil
	case nil:
		return jsontext.Value("{}"), nil
	}
	return json.Marshal(v, encodeOptions)
}

// The shapes of the messages Encode and its kin write, members in the
// order JSON-RPC lists them.
type (
	callMessage struct {
		JSONRPC string `json:"jsonrpc"`
		ID      ID     `json:"id,omitzero"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitzero"`
	}
	resultMessage struct {
		JSONRPC string `json:"jsonrpc"`
		ID      ID     `json:"id"`
		Result  any    `json:"result"`
	}
	errorMessage struct {
		JSONRPC string `json:"jsonrpc"`
		ID      ID     `json:"id"` // null when the request was unreadable
		Error   *Error `json:"error"`
	}
)

// EncodeResult encodes a result response for id; a nil result is {}.
func EncodeResult(id ID, result any) ([]byte, error) {
	if result == nil {
		result = jsontext.Value("{}")
	}
	return json.Marshal(&resultMessage{JSONRPC: "2.0", ID: id, Result: result}, encodeOptions)
}

// EncodeError encodes an error response for id (a zero id is written as null).
func EncodeError(id ID, e *Error) []byte {
	b, err := json.Marshal(&errorMessage{JSONRPC: "2.0", ID: id, Error: e}, encodeOptions)
	if err != nil { // only a malformed Data can fail; drop it
		b, _ = json.Marshal(&errorMessage{JSONRPC: "2.0", ID: id, Error: &Error{Code: e.Code, Message: e.Message}}, encodeOptions)
	}
	return b
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
	return json.Marshal(&callMessage{JSONRPC: "2.0", ID: id, Method: method, Params: params}, encodeOptions)
}

// Encode encodes m in whichever shape it has: a decoded message as it was
// received, any other as its fields say.
func Encode(m *Message) ([]byte, error) {
	if m.received != nil {
		return m.received, nil
	}
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

// rawOrNil keeps absent params absent (a nil Value in an any is not nil).
func rawOrNil(r jsontext.Value) any {
	if r == nil {
		return nil
	}
	return r
}
