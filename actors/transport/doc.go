// Package transport turns wire traffic into messages for session actors and
// their frames back into wire traffic. Transports hold no protocol state:
// what a session knows lives in its actor.
//
//	stdio:  stdin ──lines──▶ Decode ──HandleRequest/…──▶ session actor
//	        stdout ◀──lines── lineSink ◀──frames───────── session actor
package transport
