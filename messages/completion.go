package messages

// Types of CompleteReference.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// MaxCompletionValues is the most values one CompleteResult may carry.
const MaxCompletionValues = 100

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      *CompleteReference `json:"ref"`
	Argument CompleteArgument   `json:"argument"`
	// Context carries arguments already resolved (2025-06-18).
	Context *CompleteContext `json:"context,omitzero"`
	Meta    Meta             `json:"_meta,omitempty"`
}

// CompleteReference names what is being completed: a prompt (RefPrompt,
// by Name) or a resource template (RefResource, by URI).
type CompleteReference struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	URI   string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext is extra context for a completion.
type CompleteContext struct {
	// Arguments are the values of arguments already filled in.
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion CompletionResultValues `json:"completion"`
	Meta       Meta                   `json:"_meta,omitempty"`
}

// CompletionResultValues are the suggested values.
type CompletionResultValues struct {
	// Values are at most MaxCompletionValues suggestions; never null.
	Values []string `json:"values"`
	// Total is how many values exist, when known.
	Total *int `json:"total,omitzero"`
	// HasMore says more values exist than were returned.
	HasMore bool `json:"hasMore,omitzero"`
}
