package messages

// Implementation names a client or a server and its version.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	// Description says what the implementation does (2025-11-25).
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// InitializeParams are the params of initialize, the client's first request.
type InitializeParams struct {
	// ProtocolVersion is the newest revision the client supports.
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	// ProtocolVersion is the revision the session will use.
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	// Instructions tell the client (and its model) how to use the server.
	Instructions string `json:"instructions,omitempty"`
	Meta         Meta   `json:"_meta,omitempty"`
}

// InitializedParams are the params of notifications/initialized.
type InitializedParams struct {
	Meta Meta `json:"_meta,omitempty"`
}
