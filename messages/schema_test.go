package messages_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json/jsontext"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

const (
	// schemaPath is the official schema of the revision the types follow
	// (testdata/schema/README.md says where it comes from).
	schemaPath = "testdata/schema/2025-11-25/schema.json"
	schemaURL  = "https://modelcontextprotocol.io/schema/2025-11-25/schema.json"
	// strictURL prefixes the wrapper that closes a definition at the top.
	strictURL = "https://mcp-actors.test/strict/"
)

// looseDefs are the $defs that other definitions combine with allOf; they
// stay open inside the document so that the combination can add members,
// and are closed at the top by their strictURL wrapper.
var looseDefs = map[string]bool{"Result": true, "NotificationParams": true, "Task": true}

// strictSchema loads the schema and closes every object schema that lists
// its properties and says nothing about others, so that a misspelled
// optional member fails validation instead of passing as an extra. Compile
// strictURL+name for a definition closed at the top as well.
func strictSchema(t testing.TB) *jsonschema.Compiler { return loadSchema(t, true) }

// officialSchema loads the schema as it is: compile schemaURL+"#/$defs/"+name.
func officialSchema(t testing.TB) *jsonschema.Compiler { return loadSchema(t, false) }

func loadSchema(t testing.TB, closed bool) *jsonschema.Compiler {
	t.Helper()
	f, err := os.Open(schemaPath)
	require.NoError(t, err, "the official schema must be in testdata")
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)

	for name, def := range doc.(map[string]any)["$defs"].(map[string]any) {
		if closed && !looseDefs[name] {
			closeObjects(def, true)
		}
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "byte", Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		_, err := base64.StdEncoding.DecodeString(s)
		return err
	}})
	require.NoError(t, c.AddResource(schemaURL, doc))
	for name := range doc.(map[string]any)["$defs"].(map[string]any) {
		wrapper := map[string]any{"$ref": schemaURL + "#/$defs/" + name, "unevaluatedProperties": false}
		require.NoError(t, c.AddResource(strictURL+name, wrapper))
	}
	return c
}

// closeObjects closes the object schemas in v; the branches of an allOf
// stay open (only their members are closed) so that they can combine.
func closeObjects(v any, here bool) {
	switch v := v.(type) {
	case map[string]any:
		_, hasProps := v["properties"]
		_, hasAdditional := v["additionalProperties"]
		if here && v["type"] == "object" && hasProps && !hasAdditional {
			v["unevaluatedProperties"] = false
		}
		for key, child := range v {
			closeObjects(child, key != "allOf")
		}
	case []any:
		for _, child := range v {
			closeObjects(child, here)
		}
	}
}

// conformanceCases are populated values, each with the $defs entry its JSON
// must satisfy.
func conformanceCases() []struct {
	def string
	v   any
} {
	icons := []messages.Icon{{Src: "https://example.com/icon.png", MimeType: "image/png", Sizes: []string{"48x48"}, Theme: messages.IconThemeLight}}
	ann := &messages.Annotations{Audience: []messages.Role{messages.RoleUser, messages.RoleAssistant}, Priority: ptr(0.8), LastModified: "2025-01-12T15:00:58Z"}
	meta := messages.Meta{"example.com/k": jsontext.Value(`{"a":1}`)}
	task := messages.Task{TaskID: "t-1", Status: messages.TaskInputRequired, StatusMessage: "waiting", CreatedAt: "2025-11-25T10:30:00Z",
		LastUpdatedAt: "2025-11-25T10:40:00Z", TTL: ptr[int64](60000), PollInterval: ptr[int64](5000)}
	allContent := messages.ContentList{
		&messages.TextContent{Text: "hello", Annotations: ann, Meta: meta},
		&messages.ImageContent{Data: []byte("img"), MIMEType: "image/png", Annotations: ann},
		&messages.AudioContent{Data: []byte("wav"), MIMEType: "audio/wav"},
		&messages.ResourceLink{URI: "file:///a.txt", Name: "a", Title: "A", Description: "d", MIMEType: "text/plain", Size: ptr[int64](3), Annotations: ann, Icons: icons, Meta: meta},
		&messages.EmbeddedResource{Resource: &messages.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "abc", Meta: meta}, Annotations: ann, Meta: meta},
		&messages.EmbeddedResource{Resource: &messages.ResourceContents{URI: "file:///a.bin", Blob: []byte{1, 2, 3}}},
	}
	tool := &messages.Tool{
		Name: "get_weather", Title: "Weather", Description: "Gets weather",
		InputSchema:  jsontext.Value(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		OutputSchema: jsontext.Value(`{"type":"object","properties":{"temp":{"type":"number"}}}`),
		Annotations:  &messages.ToolAnnotations{Title: "W", ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(true)},
		Execution:    &messages.ToolExecution{TaskSupport: messages.TaskSupportOptional},
		Icons:        icons, Meta: meta,
	}
	progressMeta := messages.Meta{messages.MetaKeyProgressToken: jsontext.Value(`"p-1"`)}
	urlElicit := &messages.ElicitParams{Mode: messages.ElicitModeURL, Message: "Please sign in", URL: "https://example.com/login", ElicitationID: "e-1", Task: &messages.TaskMetadata{TTL: ptr[int64](1)}, Meta: progressMeta}
	impl := messages.Implementation{Name: "srv", Title: "Server", Version: "1.0.0", Description: "d", WebsiteURL: "https://example.com", Icons: icons}

	return []struct {
		def string
		v   any
	}{
		{"InitializeRequestParams", &messages.InitializeParams{
			ProtocolVersion: messages.LatestVersion,
			Capabilities: messages.ClientCapabilities{
				Experimental: map[string]jsontext.Value{"x": jsontext.Value(`{"on":true}`)},
				Roots:        &messages.RootsCapabilities{ListChanged: true},
				Sampling:     &messages.SamplingCapabilities{Context: &messages.Empty{}, Tools: &messages.Empty{}},
				Elicitation:  &messages.ElicitationCapabilities{Form: &messages.Empty{}, URL: &messages.Empty{}},
				Tasks:        jsontext.Value(`{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}`),
			},
			ClientInfo: impl, Meta: progressMeta,
		}},
		{"InitializeResult", &messages.InitializeResult{
			ProtocolVersion: messages.LatestVersion,
			Capabilities: messages.ServerCapabilities{
				Experimental: map[string]jsontext.Value{"x": jsontext.Value(`{}`)},
				Logging:      &messages.Empty{}, Completions: &messages.Empty{},
				Prompts:   &messages.PromptsCapabilities{ListChanged: true},
				Resources: &messages.ResourcesCapabilities{Subscribe: true, ListChanged: true},
				Tools:     &messages.ToolsCapabilities{ListChanged: true},
				Tasks:     jsontext.Value(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`),
			},
			ServerInfo: impl, Instructions: "use it", Meta: meta,
		}},
		{"EmptyResult", &messages.EmptyResult{Meta: meta}},
		{"PaginatedRequestParams", &messages.ListToolsParams{Cursor: "c", Meta: progressMeta}},
		{"Tool", tool},
		{"Tool", &messages.Tool{Name: "bare"}},
		{"ListToolsResult", &messages.ListToolsResult{Tools: []*messages.Tool{tool}, NextCursor: "n", Meta: meta}},
		{"ListToolsResult", &messages.ListToolsResult{}},
		{"CallToolRequestParams", &messages.CallToolParams{Name: "get_weather", Arguments: jsontext.Value(`{"city":"Paris"}`), Task: &messages.TaskMetadata{TTL: ptr[int64](60000)}, Meta: progressMeta}},
		{"CallToolResult", &messages.CallToolResult{Content: allContent, StructuredContent: jsontext.Value(`{"temp":21}`), IsError: true, Meta: meta}},
		{"CallToolResult", &messages.CallToolResult{}},
		{"Resource", &messages.Resource{URI: "file:///a", Name: "a", Title: "A", Description: "d", MIMEType: "text/plain", Size: ptr[int64](1), Annotations: ann, Icons: icons, Meta: meta}},
		{"ListResourcesResult", &messages.ListResourcesResult{Resources: []*messages.Resource{{URI: "file:///a", Name: "a"}}, NextCursor: "n", Meta: meta}},
		{"ListResourceTemplatesResult", &messages.ListResourceTemplatesResult{ResourceTemplates: []*messages.ResourceTemplate{{
			URITemplate: "file:///{path}", Name: "files", Title: "Files", Description: "d", MIMEType: "text/plain", Annotations: ann, Icons: icons, Meta: meta,
		}}, NextCursor: "n"}},
		{"ReadResourceRequestParams", &messages.ReadResourceParams{URI: "file:///a", Meta: progressMeta}},
		{"ReadResourceResult", &messages.ReadResourceResult{Contents: []*messages.ResourceContents{
			{URI: "file:///a", MIMEType: "text/plain", Text: "t", Meta: meta},
			{URI: "file:///b", Blob: []byte("b")},
			{URI: "file:///c"},
		}, Meta: meta}},
		{"SubscribeRequestParams", &messages.SubscribeParams{URI: "file:///a"}},
		{"UnsubscribeRequestParams", &messages.UnsubscribeParams{URI: "file:///a"}},
		{"ResourceUpdatedNotificationParams", &messages.ResourceUpdatedParams{URI: "file:///a", Meta: meta}},
		{"Prompt", &messages.Prompt{Name: "p", Title: "P", Description: "d", Icons: icons, Meta: meta,
			Arguments: []*messages.PromptArgument{{Name: "a", Title: "A", Description: "d", Required: true}}}},
		{"ListPromptsResult", &messages.ListPromptsResult{Prompts: []*messages.Prompt{{Name: "p"}}, NextCursor: "n", Meta: meta}},
		{"GetPromptRequestParams", &messages.GetPromptParams{Name: "p", Arguments: map[string]string{"a": "1"}, Meta: progressMeta}},
		{"GetPromptResult", &messages.GetPromptResult{Description: "d", Meta: meta, Messages: []*messages.PromptMessage{
			{Role: messages.RoleUser, Content: allContent[0]},
			{Role: messages.RoleAssistant, Content: allContent[3]},
			{Role: messages.RoleUser, Content: allContent[4]},
		}}},
		{"CompleteRequestParams", &messages.CompleteParams{Ref: &messages.CompleteReference{Type: messages.RefPrompt, Name: "p", Title: "P"},
			Argument: messages.CompleteArgument{Name: "a", Value: "x"}, Context: &messages.CompleteContext{Arguments: map[string]string{"b": "y"}}, Meta: progressMeta}},
		{"CompleteRequestParams", &messages.CompleteParams{Ref: &messages.CompleteReference{Type: messages.RefResource, URI: "file:///{path}"},
			Argument: messages.CompleteArgument{Name: "path", Value: ""}}},
		{"CompleteResult", &messages.CompleteResult{Completion: messages.CompletionResultValues{Values: []string{"a", "b"}, Total: ptr(10), HasMore: true}, Meta: meta}},
		{"CompleteResult", &messages.CompleteResult{}},
		{"SetLevelRequestParams", &messages.SetLevelParams{Level: messages.LevelWarning, Meta: progressMeta}},
		{"LoggingMessageNotificationParams", &messages.LoggingMessageParams{Level: messages.LevelError, Logger: "db", Data: jsontext.Value(`{"err":"x"}`), Meta: meta}},
		{"LoggingMessageNotificationParams", &messages.LoggingMessageParams{Level: messages.LevelDebug}},
		{"ProgressNotificationParams", &messages.ProgressParams{ProgressToken: messages.StringID("p-1"), Progress: 1, Total: ptr(2.0), Message: "half", Meta: meta}},
		{"ProgressNotificationParams", &messages.ProgressParams{ProgressToken: messages.IntID(9), Progress: 0.5}},
		{"CancelledNotificationParams", &messages.CancelledParams{RequestID: messages.IntID(4), Reason: "user", Meta: meta}},
		{"CancelledNotificationParams", &messages.CancelledParams{}},
		{"NotificationParams", &messages.InitializedParams{Meta: meta}},
		{"NotificationParams", &messages.ListChangedParams{}},
		{"RequestParams", &messages.PingParams{Meta: progressMeta}},
		{"CreateMessageRequestParams", &messages.CreateMessageParams{
			Messages: []*messages.SamplingMessage{
				{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: "weather?"}}, Meta: meta},
				{Role: messages.RoleAssistant, Content: messages.ContentList{
					&messages.TextContent{Text: "checking"},
					&messages.ToolUseContent{ID: "c1", Name: "get_weather", Input: jsontext.Value(`{"city":"Paris"}`), Meta: meta},
				}},
				{Role: messages.RoleUser, Content: messages.ContentList{&messages.ToolResultContent{
					ToolUseID: "c1", Content: allContent, StructuredContent: jsontext.Value(`{"temp":21}`), IsError: true, Meta: meta,
				}}},
				{Role: messages.RoleUser, Content: messages.ContentList{allContent[1], allContent[2]}},
			},
			ModelPreferences: &messages.ModelPreferences{Hints: []*messages.ModelHint{{Name: "claude"}}, CostPriority: ptr(0.1), SpeedPriority: ptr(0.2), IntelligencePriority: ptr(0.9)},
			SystemPrompt:     "be brief", IncludeContext: messages.IncludeContextThisServer, Temperature: ptr(0.3), MaxTokens: 100,
			StopSequences: []string{"END"}, Metadata: jsontext.Value(`{"k":"v"}`), Tools: []*messages.Tool{tool},
			ToolChoice: &messages.ToolChoice{Mode: messages.ToolChoiceRequired}, Task: &messages.TaskMetadata{}, Meta: progressMeta,
		}},
		{"CreateMessageResult", &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", StopReason: messages.StopReasonEndTurn,
			Content: messages.ContentList{&messages.TextContent{Text: "sunny"}}, Meta: meta}},
		{"CreateMessageResult", &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", StopReason: messages.StopReasonToolUse,
			Content: messages.ContentList{&messages.ToolUseContent{ID: "a", Name: "x"}, &messages.ToolUseContent{ID: "b", Name: "y"}}}},
		{"ListRootsResult", &messages.ListRootsResult{Roots: []*messages.Root{{URI: "file:///home/u", Name: "home", Meta: meta}}, Meta: meta}},
		{"ListRootsResult", &messages.ListRootsResult{}},
		{"ElicitRequestFormParams", &messages.ElicitParams{Mode: messages.ElicitModeForm, Message: "Your name?",
			RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":1},"age":{"type":"integer","minimum":0},"ok":{"type":"boolean","default":true}},"required":["name"]}`),
			Task:            &messages.TaskMetadata{TTL: ptr[int64](5)}, Meta: progressMeta}},
		{"ElicitRequestFormParams", &messages.ElicitParams{Message: "2025-06-18 style",
			RequestedSchema: jsontext.Value(`{"type":"object","properties":{"email":{"type":"string","format":"email"}}}`)}},
		{"ElicitRequestURLParams", urlElicit},
		{"ElicitResult", &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(`{"name":"Ada","age":36,"ok":true,"tags":["a"]}`), Meta: meta}},
		{"ElicitResult", &messages.ElicitResult{Action: messages.ElicitDecline}},
		{"Task", &task},
		{"Task", &messages.Task{TaskID: "t-2", Status: messages.TaskWorking, CreatedAt: "a", LastUpdatedAt: "b"}},
		{"CreateTaskResult", &messages.CreateTaskResult{Task: &task, Meta: messages.Meta{messages.MetaKeyModelImmediateResponse: jsontext.Value(`"working on it"`)}}},
		{"GetTaskRequest", jsontext.Value(mustEncodeRequest(messages.MethodGetTask, &messages.GetTaskParams{TaskID: "t-1"}))},
		{"GetTaskPayloadRequest", jsontext.Value(mustEncodeRequest(messages.MethodGetTaskPayload, &messages.GetTaskPayloadParams{TaskID: "t-1"}))},
		{"CancelTaskRequest", jsontext.Value(mustEncodeRequest(messages.MethodCancelTask, &messages.CancelTaskParams{TaskID: "t-1"}))},
		{"ListTasksRequest", jsontext.Value(mustEncodeRequest(messages.MethodListTasks, &messages.ListTasksParams{Cursor: "c"}))},
		{"GetTaskResult", &messages.GetTaskResult{Task: task, Meta: meta}},
		{"CancelTaskResult", &messages.CancelTaskResult{Task: messages.Task{TaskID: "t-1", Status: messages.TaskCancelled, CreatedAt: "a", LastUpdatedAt: "b"}}},
		{"ListTasksResult", &messages.ListTasksResult{Tasks: []*messages.Task{&task}, NextCursor: "n", Meta: meta}},
		{"TaskStatusNotificationParams", &messages.TaskStatusParams{Task: task, Meta: meta}},
		{"RelatedTaskMetadata", &messages.RelatedTaskMetadata{TaskID: "t-1"}},
		{"ElicitationCompleteNotification", jsontext.Value(mustEncodeNotification(messages.MethodElicitationComplete, &messages.ElicitationCompleteParams{ElicitationID: "e-1"}))},
		{"CallToolRequest", jsontext.Value(mustEncodeRequest(messages.MethodCallTool, &messages.CallToolParams{Name: "t"}))},
		{"ProgressNotification", jsontext.Value(mustEncodeNotification(messages.MethodProgress, &messages.ProgressParams{ProgressToken: messages.IntID(1), Progress: 1}))},
		{"URLElicitationRequiredError", jsontext.Value(messages.EncodeError(messages.IntID(2),
			messages.ErrURLElicitationRequired.WithData(&messages.URLElicitationRequiredData{Elicitations: []*messages.ElicitParams{urlElicit}})))},
	}
}

func mustEncodeRequest(method string, params any) []byte {
	b, err := messages.EncodeRequest(messages.IntID(1), method, params)
	if err != nil {
		panic(err)
	}
	return b
}

func mustEncodeNotification(method string, params any) []byte {
	b, err := messages.EncodeNotification(method, params)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSchemaConformance(t *testing.T) {
	c := strictSchema(t)
	compiled := map[string]*jsonschema.Schema{}
	for _, tc := range conformanceCases() {
		t.Run(tc.def, func(t *testing.T) {
			sch, ok := compiled[tc.def]
			if !ok {
				var err error
				sch, err = c.Compile(strictURL + tc.def)
				require.NoError(t, err)
				compiled[tc.def] = sch
			}
			b, err := messages.Marshal(tc.v)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			require.NoError(t, err)
			require.NoError(t, sch.Validate(inst), "%s:\n%s", tc.def, b)
		})
	}
}

// TestSchemaStrictnessCatchesTypos proves that the closed schema rejects a
// misspelled optional member, so that passing TestSchemaConformance means
// the field names match.
func TestSchemaStrictnessCatchesTypos(t *testing.T) {
	c := strictSchema(t)
	for def, wire := range map[string]string{
		"Tool":           `{"name":"t","inputSchema":{"type":"object"},"outputschema":{"type":"object"}}`,
		"Task":           `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":null,"pollinterval":1}`,
		"CallToolResult": `{"content":[{"type":"text","text":"x","annotation":{}}]}`,
	} {
		t.Run(def, func(t *testing.T) {
			sch, err := c.Compile(strictURL + def)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(wire)))
			require.NoError(t, err)
			require.Error(t, sch.Validate(inst))
		})
	}
}
