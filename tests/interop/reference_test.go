package interop_test

import "testing"

// TestReferenceTools drives `mcp-actors stdio --reference-tools` with the
// official Go SDK client, one server process per subtest.
func TestReferenceTools(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"initialize", testInitialize},
		{"tools_list", testToolsList},
		{"tool_content", testToolContent},
		{"sampling", testSampling},
		{"elicitation", testElicitation},
		{"roots", testRoots},
		{"progress", testProgress},
		{"logging", testLogging},
		{"cancellation", testCancellation},
		{"resources", testResources},
		{"list_changed", testListChanged},
		{"prompts", testPrompts},
	} {
		t.Run(tc.name, tc.run)
	}
}
