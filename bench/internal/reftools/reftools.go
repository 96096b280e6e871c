// Package reftools holds what the benchmark peers share about the reference
// tools they serve (see ../../REFERENCE-TOOLS.md of the shared project
// material): the tool names, test_elicitation's requested schema, the result
// texts and test_slow's timing (slow.go). Keeping it in one place makes the
// peers behave the same, and the same as our server's --reference-tools.
package reftools

import json "encoding/json/v2"

// Names of the reference tools the benchmark calls.
const (
	Echo        = "test_echo"
	Elicitation = "test_elicitation"
	Sampling    = "test_sampling"
	Roots       = "test_roots"
	Slow        = "test_slow"
)

// SamplingMaxTokens is the maxTokens of test_sampling's sampling/createMessage.
const SamplingMaxTokens = 100

// ElicitationSchema returns test_elicitation's requested schema: the
// conformance suite's {username, email}, both required strings. Each call
// returns a fresh map, so a library may annotate it.
func ElicitationSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		"required": []string{"username", "email"},
	}
}

// ElicitationText is test_elicitation's result text, as in the conformance
// suite's reference server: "User response: action=accept, content={...}".
func ElicitationText(action string, content any) string {
	if content == nil {
		content = map[string]any{}
	}
	b, _ := json.Marshal(content, json.Deterministic(true)) // members sorted, as before
	return "User response: action=" + action + ", content=" + string(b)
}

// SamplingText is test_sampling's result text for the sampled text.
func SamplingText(sampled string) string { return "LLM response: " + sampled }

// SlowDone is test_slow's result text.
const SlowDone = "done"
