package reftools

import (
	"context"
	"encoding/json/jsontext"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Texts the conformance suite expects.
const (
	simpleText        = "This is a simple text response for testing."
	embeddedText      = "This is an embedded resource content."
	mixedIntro        = "Multiple content types test:"
	mixedResourceJSON = `{"test":"data","value":123}`
	errorText         = "This tool intentionally returns an error for testing"
	reconnectionText  = "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
)

// jsonSchema2020Input is json_schema_2020_12_tool's input schema. The
// suites check that its keywords reach tools/list as declared ($schema,
// $defs, additionalProperties; from 2026-07-28 also allOf/anyOf, if/then/
// else and $anchor); the runtime keeps a tool's schema byte for byte, and
// validates arguments against all of it.
var jsonSchema2020Input = jsontext.Value(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`)

// echoInput is test_echo's input schema.
var echoInput = jsontext.Value(`{"type":"object","properties":{"text":{"type":"string","description":"The text to return unchanged"}},"required":["text"]}`)

// echoArgs are test_echo's arguments.
type echoArgs struct {
	Text string `json:"text"`
}

// addContentTools adds the tools whose results are fixed content.
func (s *refSet) addContentTools() error {
	err := s.addTools([]tool{
		{&messages.Tool{Name: "test_simple_text", Description: "Tests simple text content response", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return text(simpleText), nil
			}},
		{&messages.Tool{Name: "test_image_content", Description: "Tests image content response", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return &messages.CallToolResult{Content: messages.ContentList{imageContent()}}, nil
			}},
		{&messages.Tool{Name: "test_audio_content", Description: "Tests audio content response", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return &messages.CallToolResult{Content: messages.ContentList{
					&messages.AudioContent{Data: wavAudio, MIMEType: "audio/wav"},
				}}, nil
			}},
		{&messages.Tool{Name: "test_embedded_resource", Description: "Tests embedded resource content response", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return &messages.CallToolResult{Content: messages.ContentList{&messages.EmbeddedResource{
					Resource: &messages.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: embeddedText},
				}}}, nil
			}},
		{&messages.Tool{Name: "test_multiple_content_types", Description: "Tests response with multiple content types (text, image, resource)", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return &messages.CallToolResult{Content: messages.ContentList{
					&messages.TextContent{Text: mixedIntro},
					imageContent(),
					&messages.EmbeddedResource{Resource: &messages.ResourceContents{
						URI: "test://mixed-content-resource", MIMEType: "application/json", Text: mixedResourceJSON,
					}},
				}}, nil
			}},
		{&messages.Tool{Name: "test_error_handling", Description: "Tests error response handling: always fails with isError set", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return toolError("%s", errorText), nil
			}},
		{&messages.Tool{Name: "test_reconnection", Description: "Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the call's stream before the result, which the client gets after reconnecting", InputSchema: noArgs},
			func(_ context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				// Over Streamable HTTP this ends the POST's connection after
				// its priming event; the result waits in the session's event
				// log for the client's GET with Last-Event-ID. Elsewhere it
				// does nothing.
				s.CloseStream()
				return text(reconnectionText), nil
			}},
		{&messages.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)", InputSchema: jsonSchema2020Input},
			func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				args := req.Arguments.Clone()
				if err := args.Compact(); err != nil {
					return nil, err // cannot happen: the arguments passed the schema
				}
				return text("JSON Schema 2020-12 tool called with: " + string(args)), nil
			}},
	})
	if err != nil {
		return err
	}
	// A typed tool: the arguments arrive decoded into echoArgs. Out is an
	// interface, so the result carries no structuredContent.
	return mcpactors.AddTypedTool(s.srv,
		&messages.Tool{Name: "test_echo", Description: "Returns the text unchanged", InputSchema: echoInput},
		func(_ context.Context, _ *mcpactors.Session, in echoArgs) (*messages.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
}

// imageContent is an image block holding the reference PNG.
func imageContent() *messages.ImageContent {
	return &messages.ImageContent{Data: pngImage, MIMEType: "image/png"}
}
