package dispatcher

import "errors"

// ErrClosed is returned by Call once the table has been closed without a
// more specific reason.
var ErrClosed = errors.New("dispatcher: closed")

// ErrRemoteCancelled is returned by Call when the client cancelled the
// request with notifications/cancelled.
var ErrRemoteCancelled = errors.New("dispatcher: cancelled by the client")
