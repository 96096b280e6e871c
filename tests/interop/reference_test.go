package interop_test

import "testing"

// referenceCases check every reference tool, resource and prompt through
// the SDK client; each starts its own server with the starter it is given.
var referenceCases = []struct {
	name string
	run  func(t *testing.T, start starter)
}{
	{"initialize", testInitialize},
	{"tools_list", testToolsList},
	{"tool_content", testToolContent},
	{"sampling", testSampling},
	{"elicitation", testElicitation},
	{"elicitation_schemas", testElicitationSchemas},
	{"roots", testRoots},
	{"progress", testProgress},
	{"logging", testLogging},
	{"cancellation", testCancellation},
	{"resources", testResources},
	{"list_changed", testListChanged},
	{"prompts", testPrompts},
}

// TestReferenceTools drives `mcp-actors stdio --reference-tools` with the
// official Go SDK client, one server process per subtest.
func TestReferenceTools(t *testing.T) {
	for _, tc := range referenceCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, startStdio) })
	}
}
