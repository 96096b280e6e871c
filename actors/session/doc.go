// Package session is the session actor: one protoactor-go actor, one mailbox
// per MCP session, owning everything the session knows — lifecycle, the
// negotiated version, client info and capabilities, log level, resource
// subscriptions, the roots cache and listeners, in-flight client requests,
// pending server-to-client calls (a dispatcher.Table) and its streams.
//
// Transports and the cluster reach a session only by sending it messages
// (messages.HandleRequest and friends) through its Ref. Handlers run off the
// mailbox on their own goroutines and reach the session through the Session
// handle, which posts messages too; no handler ever touches actor state.
//
//	transport ──HandleRequest──▶ ┌─────────────┐ ──go──▶ Handler.Serve(ctx, *Session, req)
//	          ──HandleNotif.───▶ │ session     │              │ Log / Progress / Elicit / ...
//	          ──DeliverResp.───▶ │ actor       │ ◀──post──────┘
//	sink ◀──────── frames ────── │ (mailbox)   │ ◀──requestDone (result frame)
//	                             └─────────────┘
//
// Lifecycle: new ──initialize──▶ pending ──notifications/initialized──▶ open
// ──CloseSession / EOF──▶ closed. No server-to-client request leaves before
// the session is open: calls made earlier wait in the table until then.
package session
