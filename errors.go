package mcpactors

import "errors"

// ErrServerClosed is what opening a session fails with after Close.
var ErrServerClosed = errors.New("mcpactors: server closed")

// ErrInvalidItem is returned, wrapped with the reason, when a tool, prompt,
// resource or template cannot be added (empty name, bad schema, …).
var ErrInvalidItem = errors.New("mcpactors: invalid catalog item")
