package reftools

import (
	"context"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// watchedURI is the resource test_touch_watched changes.
const watchedURI = "test://watched-resource"

// dynamicTool is the tool test_toggle_tool adds and removes.
var dynamicTool = &messages.Tool{Name: "test_dynamic", Description: "A tool that test_toggle_tool adds and removes at runtime; returns \"dynamic\"", InputSchema: noArgs}

// addDynamicTools adds the tools that change the server at runtime: every
// change reaches the sessions as a notification.
func (s *refSet) addDynamicTools() error {
	err := s.addTools([]tool{
		{&messages.Tool{Name: "test_touch_watched", Description: "Changes test://watched-resource and notifies the sessions subscribed to it; returns \"touched\"", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				// The resource's version goes up on every node of a cluster:
				// its content follows it (see resources.go).
				s.srv.NotifyResourceUpdated(watchedURI)
				return text("touched"), nil
			}},
		{&messages.Tool{Name: "test_toggle_tool", Description: "Adds the tool test_dynamic if it is absent and removes it if present (every session gets notifications/tools/list_changed); returns \"added\" or \"removed\"", InputSchema: noArgs},
			func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				// test_dynamic is added on every node, disabled; toggling
				// it is replicated to every node of a cluster.
				on, err := s.srv.ToggleTool(ctx, dynamicTool.Name)
				if err != nil {
					return nil, err
				}
				if on {
					return text("added"), nil
				}
				return text("removed"), nil
			}},
	})
	if err != nil {
		return err
	}
	if err := s.srv.AddTool(dynamicTool, dynamicHandler); err != nil {
		return err
	}
	return s.srv.SetToolEnabled(context.Background(), dynamicTool.Name, false)
}

// dynamicHandler runs test_dynamic.
func dynamicHandler(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
	return text("dynamic"), nil
}
