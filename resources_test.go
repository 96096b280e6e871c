package mcpactors_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestReadResource(t *testing.T) {
	srv := newServer(nil)
	require.NoError(t, srv.AddResource(&messages.Resource{URI: "test://static/text", Name: "text", MIMEType: "text/plain"},
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
			return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{
				{URI: req.URI, MIMEType: "text/plain", Text: fmt.Sprintf("hello (vars %v)", req.Vars)},
			}}, nil
		}))
	require.NoError(t, srv.AddResource(&messages.Resource{URI: "test://static/blob", Name: "blob", MIMEType: "application/octet-stream"},
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
			return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{
				{URI: req.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 0xff}},
			}}, nil
		}))
	require.NoError(t, srv.AddResource(&messages.Resource{URI: "test://static/empty", Name: "empty"},
		func(context.Context, *mcpactors.Session, *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
			return nil, nil
		}))
	require.NoError(t, srv.AddResource(&messages.Resource{URI: "test://static/broken", Name: "broken"},
		func(context.Context, *mcpactors.Session, *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
			return nil, errors.New("secret detail: the database password is wrong")
		}))
	// A static resource under the template's pattern wins over it.
	require.NoError(t, srv.AddResource(&messages.Resource{URI: "test://items/special", Name: "special"}, okResource))

	var (
		mu   sync.Mutex
		seen []*mcpactors.ReadResourceRequest
	)
	require.NoError(t, srv.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
			mu.Lock()
			seen = append(seen, req)
			mu.Unlock()
			if req.Vars["id"] == "missing" {
				return nil, fmt.Errorf("looking up item %s: %w", req.Vars["id"], messages.ErrResourceNotFound)
			}
			return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{
				{URI: req.URI, Text: "item " + req.Vars["id"]},
			}}, nil
		}))
	require.NoError(t, srv.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://users/{user}/posts/{post}", Name: "post"},
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
			return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{
				{URI: req.URI, Text: req.Vars["user"] + "/" + req.Vars["post"]},
			}}, nil
		}))
	c := harness.New(t, srv).Connect()

	tests := []struct {
		name       string
		uri        string
		wantResult string // raw, compared as JSON
		wantCode   int64  // a JSON-RPC error instead
		wantData   string // its data, compared as JSON
	}{
		{
			name: "static text", uri: "test://static/text",
			wantResult: `{"contents":[{"uri":"test://static/text","mimeType":"text/plain","text":"hello (vars map[])"}]}`,
		},
		{
			name: "static blob", uri: "test://static/blob",
			wantResult: `{"contents":[{"uri":"test://static/blob","mimeType":"application/octet-stream","blob":"AAEC/w=="}]}`,
		},
		{name: "nil result", uri: "test://static/empty", wantResult: `{"contents":[]}`},
		{name: "template", uri: "test://items/42", wantResult: `{"contents":[{"uri":"test://items/42","text":"item 42"}]}`},
		{name: "template with two variables", uri: "test://users/ada/posts/7", wantResult: `{"contents":[{"uri":"test://users/ada/posts/7","text":"ada/7"}]}`},
		{name: "static wins over template", uri: "test://items/special", wantResult: `{"contents":[{"uri":"test://items/special","text":"ok"}]}`},
		{
			name: "unknown uri", uri: "test://nowhere",
			wantCode: messages.CodeResourceNotFound, wantData: `{"uri":"test://nowhere"}`,
		},
		{
			name: "template does not match", uri: "test://items/1/2",
			wantCode: messages.CodeResourceNotFound, wantData: `{"uri":"test://items/1/2"}`,
		},
		{
			name: "handler reports not found", uri: "test://items/missing",
			wantCode: messages.CodeResourceNotFound, wantData: `{"uri":"test://items/missing"}`,
		},
		{name: "handler fails", uri: "test://static/broken", wantCode: messages.CodeInternalError},
		{name: "no uri", uri: "", wantCode: messages.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw jsontext.Value
			err := c.CallResult(t.Context(), messages.MethodReadResource, map[string]string{"uri": tt.uri}, &raw)
			if tt.wantCode == 0 {
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantResult, string(raw))
				return
			}
			e := wireError(t, err)
			assert.Equal(t, tt.wantCode, e.Code, e.Message)
			assert.NotContains(t, e.Message, "secret", "a handler's own error text stays on the server")
			if tt.wantData != "" {
				require.ErrorIs(t, err, messages.ErrResourceNotFound)
				assert.JSONEq(t, tt.wantData, string(e.Data))
			}
		})
	}

	t.Run("template variables reach the handler", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, seen)
		assert.Equal(t, "test://items/42", seen[0].URI)
		assert.Equal(t, map[string]string{"id": "42"}, seen[0].Vars)
	})
}

func TestListResourceTemplates(t *testing.T) {
	srv := newServer(nil)
	require.NoError(t, srv.AddResourceTemplate(&messages.ResourceTemplate{
		URITemplate: "test://items/{id}", Name: "item", Title: "Item", Description: "One item", MIMEType: "application/json",
	}, okResource))
	require.NoError(t, srv.AddResource(&messages.Resource{URI: "test://static/a", Name: "a"}, okResource))
	c := harness.New(t, srv).Connect()

	assert.JSONEq(t,
		`{"resourceTemplates":[{"uriTemplate":"test://items/{id}","name":"item","title":"Item","description":"One item","mimeType":"application/json"}]}`,
		string(rawResult(t, c, messages.MethodListResourceTemplates, nil)))
	assert.JSONEq(t,
		`{"resources":[{"uri":"test://static/a","name":"a"}]}`,
		string(rawResult(t, c, messages.MethodListResources, nil)),
		"templates are not resources")
}

func TestAddResourceRefusesInvalidDefinitions(t *testing.T) {
	tests := []struct {
		name string
		add  func(*mcpactors.Server) error
	}{
		{"nil resource", func(s *mcpactors.Server) error { return s.AddResource(nil, okResource) }},
		{"no uri", func(s *mcpactors.Server) error { return s.AddResource(&messages.Resource{Name: "x"}, okResource) }},
		{"no name", func(s *mcpactors.Server) error { return s.AddResource(&messages.Resource{URI: "test://x"}, okResource) }},
		{"nil handler", func(s *mcpactors.Server) error {
			return s.AddResource(&messages.Resource{URI: "test://x", Name: "x"}, nil)
		}},
		{"nil template", func(s *mcpactors.Server) error { return s.AddResourceTemplate(nil, okResource) }},
		{"no uri template", func(s *mcpactors.Server) error {
			return s.AddResourceTemplate(&messages.ResourceTemplate{Name: "x"}, okResource)
		}},
		{"template without name", func(s *mcpactors.Server) error {
			return s.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://{x}"}, okResource)
		}},
		{"bad uri template", func(s *mcpactors.Server) error {
			return s.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://{x", Name: "x"}, okResource)
		}},
		{"template with nil handler", func(s *mcpactors.Server) error {
			return s.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://{x}", Name: "x"}, nil)
		}},
	}
	srv := newServer(nil)
	c := harness.New(t, srv).Connect()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.add(srv), mcpactors.ErrInvalidItem)
		})
	}
	barrier(t, c)
	assert.Empty(t, c.Notifications(""))
	assert.Empty(t, listKinds[2].all(t, c))
	assert.Empty(t, listKinds[3].all(t, c))
}

func TestNotifyResourceUpdatedReachesSubscribers(t *testing.T) {
	const watched = "test://static/watched"
	srv := newServer(nil)
	require.NoError(t, srv.AddResource(&messages.Resource{URI: watched, Name: "watched"}, okResource))
	h := harness.New(t, srv)
	subscriber, other, bystander := h.Connect(), h.Connect(), h.Connect()

	subscribe := func(c *harness.Client, method, uri string) {
		t.Helper()
		require.NoError(t, c.CallResult(t.Context(), method, &messages.SubscribeParams{URI: uri}, nil))
	}
	subscribe(subscriber, messages.MethodSubscribe, watched)
	subscribe(other, messages.MethodSubscribe, "test://static/elsewhere")

	updates := func(c *harness.Client) []string {
		var uris []string
		for _, m := range c.Notifications(messages.MethodResourceUpdated) {
			var p messages.ResourceUpdatedParams
			require.NoError(t, json.Unmarshal(m.Params, &p))
			uris = append(uris, p.URI)
		}
		return uris
	}

	from := len(subscriber.Received())
	srv.NotifyResourceUpdated(watched)
	_, err := subscriber.WaitNotification(t.Context(), messages.MethodResourceUpdated, from)
	require.NoError(t, err)

	tests := []struct {
		name   string
		client *harness.Client
		want   []string
	}{
		{"subscribed", subscriber, []string{watched}},
		{"subscribed to another uri", other, nil},
		{"not subscribed", bystander, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			barrier(t, tt.client)
			assert.Equal(t, tt.want, updates(tt.client))
		})
	}

	t.Run("unsubscribed", func(t *testing.T) {
		subscribe(subscriber, messages.MethodUnsubscribe, watched)
		srv.NotifyResourceUpdated(watched)
		barrier(t, subscriber)
		assert.Equal(t, []string{watched}, updates(subscriber), "no update after unsubscribing")
	})
}
