package reftools

import (
	"context"
	json "encoding/json/v2"
	"fmt"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// staticText is the content of test://static-text.
const staticText = "This is the content of the static text resource."

// addResources adds the resources and the resource template.
func (s *refSet) addResources() error {
	resources := []struct {
		def     *messages.Resource
		handler mcpactors.ResourceHandler
	}{
		{&messages.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
			Description: "A static text resource for testing", MIMEType: "text/plain"},
			func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
				return contents(&messages.ResourceContents{URI: req.URI, MIMEType: "text/plain", Text: staticText}), nil
			}},
		{&messages.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
			Description: "A static binary resource (a PNG image) for testing", MIMEType: "image/png"},
			func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
				return contents(&messages.ResourceContents{URI: req.URI, MIMEType: "image/png", Blob: pngImage}), nil
			}},
		{&messages.Resource{URI: watchedURI, Name: "watched-resource", Title: "Watched Resource",
			Description: "A subscribable resource that changes each time the tool test_touch_watched runs", MIMEType: "text/plain"},
			func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
				return contents(&messages.ResourceContents{URI: req.URI, MIMEType: "text/plain", Text: watchedText(s.srv.ResourceVersion(watchedURI))}), nil
			}},
	}
	for _, r := range resources {
		if err := s.srv.AddResource(r.def, r.handler); err != nil {
			return err
		}
	}
	return s.srv.AddResourceTemplate(&messages.ResourceTemplate{
		URITemplate: "test://template/{id}/data", Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MIMEType: "application/json",
	}, func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
		data, err := templateData(req.Vars["id"])
		if err != nil {
			return nil, err
		}
		return contents(&messages.ResourceContents{URI: req.URI, MIMEType: "application/json", Text: data}), nil
	})
}

// watchedText is the content of test://watched-resource after n touches.
func watchedText(n uint64) string {
	if n == 0 {
		return "Watched resource content"
	}
	return fmt.Sprintf("Watched resource content (update %d)", n)
}

// templateData is the content of test://template/{id}/data:
// {"id":"<id>","templateTest":true,"data":"Data for ID: <id>"}.
func templateData(id string) (string, error) {
	b, err := json.Marshal(struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}{id, true, "Data for ID: " + id})
	return string(b), err
}

// contents is a read result of one item.
func contents(c *messages.ResourceContents) *messages.ReadResourceResult {
	return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{c}}
}
