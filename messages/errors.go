package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700 // the message is not valid JSON
	CodeInvalidRequest = -32600 // valid JSON, but not a valid JSON-RPC message
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // the params do not fit the method
	CodeInternalError  = -32603 // the server failed while handling the request
	// CodeResourceNotFound is MCP's code for resources/read of an unknown URI.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired tells the client that a URL-mode elicitation
	// must complete before the request can succeed (2025-11-25).
	CodeURLElicitationRequired = -32042
)

// Error is a JSON-RPC error object. It is also a Go error whose Is compares
// the code, so errors.Is(err, ErrInvalidParams) holds for any -32602 error.
type Error struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitempty"`
}

// Sentinel errors, one per code; compare with errors.Is.
var (
	ErrParse                  = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest         = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound         = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams          = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal               = &Error{Code: CodeInternalError, Message: "internal error"}
	ErrResourceNotFound       = &Error{Code: CodeResourceNotFound, Message: "resource not found"}
	ErrURLElicitationRequired = &Error{Code: CodeURLElicitationRequired, Message: "URL elicitation required"}
)

// Errorf returns an Error with the given code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns the message with its code.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// WithData returns a copy of e carrying data (marshalled to JSON).
func (e *Error) WithData(data any) *Error {
	c := *e
	if b, err := json.Marshal(data); err == nil {
		c.Data = b
	}
	return &c
}

// AsError returns err as a wire error: an *Error in err's chain as it is, and
// anything else as a generic internal error that leaks no detail.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: "internal error"}
}
