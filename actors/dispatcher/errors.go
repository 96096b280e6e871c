package dispatcher

import (
	"errors"

	"github.com/mcp-actors/mcp-actors/messages"
)

// ErrClosed is returned by Call once the table has been closed without a
// more specific reason.
var ErrClosed = errors.New("outbound: closed")

// ErrRemoteCancelled is returned by Call when the client cancelled the
// request with notifications/cancelled.
var ErrRemoteCancelled = errors.New("outbound: cancelled by the client")

// ClientError is the client's JSON-RPC error answer to a server-to-client
// request. errors.Is matches it against a *messages.Error with the same code
// (errors.Is(err, messages.ErrInvalidParams)), but errors.As does not find a
// *messages.Error in it, on purpose: a handler that passes the client's
// refusal on must not turn it into its own JSON-RPC error. Wire is the
// client's error object, unchanged.
type ClientError struct {
	Wire *messages.Error
}

// Error returns the client's error with its code.
func (e *ClientError) Error() string { return e.Wire.Error() }

// Is compares codes with a *messages.Error target.
func (e *ClientError) Is(target error) bool { return e.Wire.Is(target) }
