// Package messages is the leaf of mcp-actors: the JSON-RPC 2.0 envelope, the
// MCP wire types for protocol revisions 2024-11-05 … 2025-11-25, one constant
// per method name, the JSON-RPC error codes, and the actor messages that
// transports and the cluster send to session actors.
//
// It imports only the standard library and protowire (the wire format of
// protocol buffers, for the binary envelope actor messages cross nodes in;
// see codec.go), and knows nothing about actors, NATS or HTTP.
//
// The wire types are written for encoding/json/v2 (Marshal, or v2's own
// Marshal): v2 writes a nil list the protocol requires as [], where
// encoding/json v1's options write null.
//
//	wire bytes ──Decode──▶ *Message ──(transport)──▶ HandleRequest / HandleNotification / DeliverResponse
//	                                                      │
//	wire bytes ◀──Frame.Data◀── EncodeResponse / EncodeRequest / EncodeNotification ◀── session
package messages
