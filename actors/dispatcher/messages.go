package dispatcher

// Message is the set of messages a Client posts to the actor that owns the
// table. The actor passes them to Table.Receive.
type Message interface{ outboundMessage() }

// Begin asks the table to send Call to the client.
type Begin struct{ Call *Call }

// Cancel asks the table to stop waiting for Call and tell the client.
type Cancel struct {
	Call   *Call
	Reason string
}

func (*Begin) outboundMessage()  {}
func (*Cancel) outboundMessage() {}
