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
// A caller made WithSuspender (a handler a transport runs inline, see
// messages.Suspender) waits suspended rather than blocked: the table's
// finishing or routing progress to the call, the caller's context and the
// actor's end each resume it.
//
// IDs are monotonic integers. A response for an ID that is not pending is
// ignored and counted: as a duplicate when the ID was issued before, as
// stray otherwise.
package dispatcher
