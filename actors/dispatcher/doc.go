// Package dispatcher is the outbound call table of one session: the
// server-to-client requests (sampling, elicitation, roots) that are waiting
// for the client's answer.
//
// The Table is confined to its session actor and has no mutex. Callers run on
// their own goroutines and reach it only by posting Begin and Cancel messages
// to the actor through a Client:
//
//	handler goroutine            session actor (Table)              client
//	Client.Call ──Begin──────▶   allocate ID, pending[ID] ──frame──▶ request
//	     ◀──────── result ────── HandleResponse(ID)     ◀────────── response
//	ctx done ────Cancel──────▶   drop pending[ID]       ──frame──▶ notifications/cancelled
//	     ◀── ErrRemoteCancelled  HandleCancelled(ID)    ◀────────── notifications/cancelled
//	progress callback ◀──────── HandleProgress(token)  ◀────────── notifications/progress
//
// IDs are monotonic integers. A response for an ID that is not pending is
// ignored and counted: as a duplicate when the ID was issued before, as
// stray otherwise.
package dispatcher
