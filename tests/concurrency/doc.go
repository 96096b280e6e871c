// Package concurrency holds stress and ordering tests across many sessions:
// out-of-order answers to server-to-client requests, cancellation storms,
// and sessions closed while calls are pending. Every test is scripted
// (channels and waits on received messages, no sleeps) and runs under -race
// with a goroutine-leak check.
package concurrency
