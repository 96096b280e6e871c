package messages

// Root is a directory or file the client exposes to the server.
type Root struct {
	// URI is a file:// URI.
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsParams are the params of roots/list.
type ListRootsParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	// Roots never marshals as null.
	Roots []*Root `json:"roots"`
	Meta  Meta    `json:"_meta,omitempty"`
}
