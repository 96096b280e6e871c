package messages

// Method names, one constant per JSON-RPC method or notification.
const (
	// Lifecycle and utilities.
	MethodInitialize  = "initialize"
	MethodPing        = "ping"
	MethodSetLevel    = "logging/setLevel"
	MethodComplete    = "completion/complete"
	MethodInitialized = "notifications/initialized"
	MethodCancelled   = "notifications/cancelled"
	MethodProgress    = "notifications/progress"
	MethodLogMessage  = "notifications/message"

	// Tools.
	MethodListTools        = "tools/list"
	MethodCallTool         = "tools/call"
	MethodToolsListChanged = "notifications/tools/list_changed"

	// Resources.
	MethodListResources         = "resources/list"
	MethodListResourceTemplates = "resources/templates/list"
	MethodReadResource          = "resources/read"
	MethodSubscribe             = "resources/subscribe"
	MethodUnsubscribe           = "resources/unsubscribe"
	MethodResourcesListChanged  = "notifications/resources/list_changed"
	MethodResourceUpdated       = "notifications/resources/updated"

	// Prompts.
	MethodListPrompts        = "prompts/list"
	MethodGetPrompt          = "prompts/get"
	MethodPromptsListChanged = "notifications/prompts/list_changed"

	// Client features (server-to-client requests).
	MethodCreateMessage       = "sampling/createMessage"
	MethodListRoots           = "roots/list"
	MethodRootsListChanged    = "notifications/roots/list_changed"
	MethodElicit              = "elicitation/create"
	MethodElicitationComplete = "notifications/elicitation/complete"

	// Tasks (2025-11-25).
	MethodGetTask        = "tasks/get"
	MethodGetTaskPayload = "tasks/result"
	MethodListTasks      = "tasks/list"
	MethodCancelTask     = "tasks/cancel"
	MethodTaskStatus     = "notifications/tasks/status"
)

// Protocol revisions of the legacy (session) era, oldest first.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// LatestVersion is the newest revision a legacy session negotiates.
	LatestVersion = Version20251125
)

// SupportedVersions lists the legacy revisions, oldest first.
var SupportedVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// IsSupportedVersion reports whether v is a legacy revision we speak.
func IsSupportedVersion(v string) bool {
	for _, s := range SupportedVersions {
		if s == v {
			return true
		}
	}
	return false
}

// NegotiateVersion returns the revision a session uses when the client asks
// for requested: the same when supported, otherwise our latest.
func NegotiateVersion(requested string) string {
	if IsSupportedVersion(requested) {
		return requested
	}
	return LatestVersion
}
