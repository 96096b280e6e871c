// Package floorwire is what the two non-MCP floors (floor, epollfloor)
// read from the load client's messages and the form they ask it to fill.
package floorwire

import "encoding/json"

// ElicitSchema is the reference tools' test_elicitation form.
const ElicitSchema = `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`

// Message is every field of a client message the floors look at.
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Text    string `json:"text"`
			Message string `json:"message"`
		} `json:"arguments"`
	} `json:"params"`
}
