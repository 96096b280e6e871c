package reftools

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"errors"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// samplingMaxTokens is the maxTokens test_sampling asks for.
const samplingMaxTokens = 100

var (
	samplingInput = jsontext.Value(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`)
	elicitInput   = jsontext.Value(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`)

	// elicitSchema is test_elicitation's form: the conformance suite's
	// username and email, both required.
	elicitSchema = jsontext.Value(`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)

	// sep1034Schema has a default for every primitive type (SEP-1034).
	sep1034Schema = jsontext.Value(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}` +
		`},"required":[]}`)

	// sep1330Schema has the five enum shapes of SEP-1330: untitled and
	// titled single-select, the deprecated enumNames form, untitled and
	// titled multi-select.
	sep1330Schema = jsontext.Value(`{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[` +
		`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[` +
		`{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}` +
		`},"required":[]}`)
)

type samplingArgs struct {
	Prompt string `json:"prompt"`
}

type elicitArgs struct {
	Message string `json:"message"`
}

// rootsResult is test_roots' structured content.
type rootsResult struct {
	Roots []*messages.Root `json:"roots"`
}

// addClientTools adds the tools that call back to the client. A failed call
// (the client lacks the capability, answers with an error, or the session
// ends) is reported to the model as an isError result; but for a client of
// 2026-07-28 a missing capability is the tool's error, which the server
// answers with MissingRequiredClientCapability (-32021).
func (s *refSet) addClientTools() error {
	err := mcpactors.AddTypedTool(s.srv,
		&messages.Tool{Name: "test_sampling", Description: "Tests server-initiated sampling (LLM completion request)", InputSchema: samplingInput},
		func(ctx context.Context, sess *mcpactors.Session, in samplingArgs) (*messages.CallToolResult, any, error) {
			res, err := sess.CreateMessage(ctx, &messages.CreateMessageParams{
				Messages: []*messages.SamplingMessage{{
					Role:    messages.RoleUser,
					Content: messages.ContentList{&messages.TextContent{Text: in.Prompt}},
				}},
				MaxTokens: samplingMaxTokens,
			})
			if missingCapability(sess, err) {
				return nil, nil, err
			}
			if err != nil {
				return toolError("sampling failed: %v", err), nil, nil
			}
			for _, c := range res.Content {
				if t, ok := c.(*messages.TextContent); ok {
					return text("LLM response: " + t.Text), nil, nil
				}
			}
			return toolError("sampling failed: the client's answer has no text"), nil, nil
		})
	if err != nil {
		return err
	}
	err = mcpactors.AddTypedTool(s.srv,
		&messages.Tool{Name: "test_elicitation", Description: "Tests server-initiated elicitation (user input request)", InputSchema: elicitInput},
		func(ctx context.Context, sess *mcpactors.Session, in elicitArgs) (*messages.CallToolResult, any, error) {
			res, err := elicit(ctx, sess, in.Message, elicitSchema, "User response")
			return res, nil, err
		})
	if err != nil {
		return err
	}
	return s.addTools([]tool{
		{&messages.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Tests elicitation with default values per SEP-1034", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return elicit(ctx, sess, "Please review and update the form fields with defaults", sep1034Schema, "Elicitation completed")
			}},
		{&messages.Tool{Name: "test_elicitation_sep1330_enums", Description: "Tests elicitation with enum schema improvements per SEP-1330", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return elicit(ctx, sess, "Please select options from the enum fields", sep1330Schema, "Elicitation completed")
			}},
		{&messages.Tool{Name: "test_roots", Description: "Lists the client's roots, asking the client on every call", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				roots, err := sess.ListRoots(ctx, mcpactors.FreshRoots())
				if missingCapability(sess, err) {
					return nil, err
				}
				if err != nil {
					return toolError("listing roots failed: %v", err), nil
				}
				if roots == nil {
					roots = []*messages.Root{}
				}
				raw, err := messages.Marshal(&rootsResult{Roots: roots})
				if err != nil {
					return nil, err
				}
				res := text(string(raw))
				res.StructuredContent = raw
				return res, nil
			}},
	})
}

// missingCapability reports whether err is a missing capability of a
// modern request's client, which the tool returns as its error.
func missingCapability(sess *mcpactors.Session, err error) bool {
	return sess.Modern() && errors.Is(err, mcpactors.ErrCapability)
}

// elicit asks the client to fill schema and reports the answer as
// "<prefix>: action=<action>, content=<content>", the content exactly as the
// client sent it ({} when it sent none).
func elicit(ctx context.Context, sess *mcpactors.Session, message string, schema jsontext.Value, prefix string) (*messages.CallToolResult, error) {
	res, err := sess.ElicitForm(ctx, &messages.ElicitParams{Message: message, RequestedSchema: schema})
	if missingCapability(sess, err) {
		return nil, err
	}
	if err != nil {
		return toolError("elicitation failed: %v", err), nil
	}
	content := bytes.TrimSpace(res.Content)
	if len(content) == 0 || string(content) == "null" {
		content = []byte("{}")
	}
	return text(prefix + ": action=" + string(res.Action) + ", content=" + string(content)), nil
}
