package mcpactors_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// listKind is one of the catalog's lists, seen from the wire.
type listKind struct {
	name    string
	method  string // the list method
	field   string // the array in its result
	key     string // what the list is sorted by
	changed string // the list_changed notification
	// keyOf turns a short name ("a") into an item key of this kind.
	keyOf  func(string) string
	add    func(s *mcpactors.Server, key string) error
	remove func(s *mcpactors.Server, keys ...string)
}

var listKinds = []listKind{
	{
		name: "tools", method: messages.MethodListTools, field: "tools", key: "name",
		changed: messages.MethodToolsListChanged,
		keyOf:   func(n string) string { return n },
		add: func(s *mcpactors.Server, key string) error {
			return s.AddTool(&messages.Tool{Name: key}, okTool)
		},
		remove: (*mcpactors.Server).RemoveTools,
	},
	{
		name: "prompts", method: messages.MethodListPrompts, field: "prompts", key: "name",
		changed: messages.MethodPromptsListChanged,
		keyOf:   func(n string) string { return n },
		add: func(s *mcpactors.Server, key string) error {
			return s.AddPrompt(&messages.Prompt{Name: key}, okPrompt)
		},
		remove: (*mcpactors.Server).RemovePrompts,
	},
	{
		name: "resources", method: messages.MethodListResources, field: "resources", key: "uri",
		changed: messages.MethodResourcesListChanged,
		keyOf:   func(n string) string { return "test://static/" + n },
		add: func(s *mcpactors.Server, key string) error {
			return s.AddResource(&messages.Resource{URI: key, Name: key}, okResource)
		},
		remove: (*mcpactors.Server).RemoveResources,
	},
	{
		name: "resource templates", method: messages.MethodListResourceTemplates, field: "resourceTemplates", key: "uriTemplate",
		changed: messages.MethodResourcesListChanged,
		keyOf:   func(n string) string { return "test://" + n + "/{id}" },
		add: func(s *mcpactors.Server, key string) error {
			return s.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: key, Name: key}, okResource)
		},
		remove: (*mcpactors.Server).RemoveResourceTemplates,
	},
}

// keys turns short names into item keys of the kind.
func (k listKind) keys(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = k.keyOf(n)
	}
	return out
}

// page lists one page and returns the keys on it, in order, and the next
// cursor.
func (k listKind) page(t *testing.T, c *harness.Client, cursor string) ([]string, string, error) {
	t.Helper()
	var params any
	if cursor != "" {
		params = map[string]string{"cursor": cursor}
	}
	var raw map[string]jsontext.Value
	if err := c.CallResult(t.Context(), k.method, params, &raw); err != nil {
		return nil, "", err
	}
	var items []map[string]any
	require.NoError(t, json.Unmarshal(raw[k.field], &items))
	require.NotNil(t, items, "%q must be an array, never null or missing", k.field)
	keys := make([]string, len(items))
	for i, item := range items {
		keys[i], _ = item[k.key].(string)
	}
	var next string
	if raw["nextCursor"] != nil {
		require.NoError(t, json.Unmarshal(raw["nextCursor"], &next))
		require.NotEmpty(t, next, "a nextCursor must not be empty")
	}
	return keys, next, nil
}

// all lists every page and returns the keys in order.
func (k listKind) all(t *testing.T, c *harness.Client) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 100 {
		keys, next, err := k.page(t, c, cursor)
		require.NoError(t, err)
		out = append(out, keys...)
		if next == "" {
			return out
		}
		cursor = next
	}
	t.Fatalf("%s: the pages never end", k.name)
	return nil
}

func TestListsAreSortedAndStable(t *testing.T) {
	srv := newServer(nil)
	for _, k := range listKinds {
		for _, n := range []string{"delta", "alpha", "echo", "charlie", "bravo"} {
			require.NoError(t, k.add(srv, k.keyOf(n)))
		}
		require.NoError(t, k.add(srv, k.keyOf("charlie")), "adding an item again replaces it")
	}
	c := harness.New(t, srv).Connect()

	for _, k := range listKinds {
		t.Run(k.name, func(t *testing.T) {
			want := k.keys("alpha", "bravo", "charlie", "delta", "echo")
			for range 3 {
				got, next, err := k.page(t, c, "")
				require.NoError(t, err)
				assert.Equal(t, want, got)
				assert.Empty(t, next, "the default page holds everything")
			}
		})
	}
}

func TestListsPaginate(t *testing.T) {
	srv := newServer(&mcpactors.Options{PageSize: 2})
	for _, k := range listKinds {
		for _, n := range []string{"echo", "bravo", "delta", "alpha", "charlie"} {
			require.NoError(t, k.add(srv, k.keyOf(n)))
		}
	}
	c := harness.New(t, srv).Connect()

	for _, k := range listKinds {
		t.Run(k.name, func(t *testing.T) {
			var pages [][]string
			seenCursors := map[string]bool{}
			cursor := ""
			for {
				keys, next, err := k.page(t, c, cursor)
				require.NoError(t, err)
				pages = append(pages, keys)
				if next == "" {
					break
				}
				assert.False(t, seenCursors[next], "cursor %q handed out twice", next)
				seenCursors[next] = true
				for _, key := range keys {
					assert.NotContains(t, next, key, "cursors are opaque")
				}
				require.Less(t, len(pages), 5, "the pages never end")
				cursor = next
			}
			assert.Equal(t, [][]string{k.keys("alpha", "bravo"), k.keys("charlie", "delta"), k.keys("echo")}, pages)

			again, next, err := k.page(t, c, "")
			require.NoError(t, err)
			assert.Equal(t, pages[0], again)
			second, _, err := k.page(t, c, next)
			require.NoError(t, err)
			assert.Equal(t, pages[1], second, "the same cursor gives the same page")
		})
	}

	t.Run("a cursor outlives its item", func(t *testing.T) {
		k := listKinds[0]
		_, next, err := k.page(t, c, "")
		require.NoError(t, err)
		k.remove(srv, "bravo")
		got, _, err := k.page(t, c, next)
		require.NoError(t, err)
		assert.Equal(t, []string{"charlie", "delta"}, got)
	})
}

func TestListCursorsAreChecked(t *testing.T) {
	srv := newServer(&mcpactors.Options{PageSize: 1})
	for _, k := range listKinds {
		for _, n := range []string{"a", "b"} {
			require.NoError(t, k.add(srv, k.keyOf(n)))
		}
	}
	c := harness.New(t, srv).Connect()

	cursors := map[string]string{} // kind → a cursor it made
	for _, k := range listKinds {
		_, next, err := k.page(t, c, "")
		require.NoError(t, err)
		require.NotEmpty(t, next)
		cursors[k.name] = next
	}

	garbage := []string{"not a cursor!", "%%%", "YQ", "e30", strings.Repeat("A", 64)}
	for _, k := range listKinds {
		for _, cursor := range garbage {
			t.Run(k.name+"/garbage "+cursor, func(t *testing.T) {
				_, _, err := k.page(t, c, cursor)
				require.ErrorIs(t, err, messages.ErrInvalidParams)
			})
		}
		for _, other := range listKinds {
			if other.name == k.name {
				continue
			}
			t.Run(k.name+"/cursor of "+other.name, func(t *testing.T) {
				_, _, err := k.page(t, c, cursors[other.name])
				require.ErrorIs(t, err, messages.ErrInvalidParams)
			})
		}
		t.Run(k.name+"/own cursor", func(t *testing.T) {
			got, _, err := k.page(t, c, cursors[k.name])
			require.NoError(t, err)
			assert.Equal(t, k.keys("b"), got)
		})
	}
}

func TestCatalogChangesNotifyOpenSessions(t *testing.T) {
	srv := newServer(nil)
	h := harness.New(t, srv)
	clients := []*harness.Client{h.Connect(), h.Connect()}
	pending := h.Open() // never initialized: gets no list_changed
	_, err := pending.Call(t.Context(), messages.MethodInitialize, &messages.InitializeParams{
		ProtocolVersion: messages.LatestVersion,
		ClientInfo:      messages.Implementation{Name: "pending", Version: "0"},
	})
	require.NoError(t, err)

	// expect runs change and checks that every open client got exactly one
	// more notification of method.
	expect := func(t *testing.T, method string, change func()) {
		t.Helper()
		before := make([]int, len(clients))
		from := make([]int, len(clients))
		for i, c := range clients {
			before[i] = len(c.Notifications(method))
			from[i] = len(c.Received())
		}
		change()
		for i, c := range clients {
			_, err := c.WaitNotification(t.Context(), method, from[i])
			require.NoError(t, err)
			barrier(t, c)
			assert.Len(t, c.Notifications(method), before[i]+1, "client %d", i)
		}
	}
	// expectNone runs change and checks that no client got anything.
	expectNone := func(t *testing.T, change func()) {
		t.Helper()
		before := make([]int, len(clients))
		for i, c := range clients {
			before[i] = len(c.Notifications(""))
		}
		change()
		for i, c := range clients {
			barrier(t, c)
			assert.Len(t, c.Notifications(""), before[i], "client %d", i)
		}
	}

	for _, k := range listKinds {
		t.Run(k.name, func(t *testing.T) {
			key := k.keyOf("runtime")
			expect(t, k.changed, func() { require.NoError(t, k.add(srv, key)) })
			for _, c := range clients {
				assert.Equal(t, []string{key}, k.all(t, c))
			}
			expect(t, k.changed, func() { require.NoError(t, k.add(srv, key)) }) // replaced
			expect(t, k.changed, func() { k.remove(srv, key, k.keyOf("never-added")) })
			for _, c := range clients {
				assert.Empty(t, k.all(t, c))
			}
			expectNone(t, func() { k.remove(srv, key) })
			expectNone(t, func() { k.remove(srv) })
		})
	}

	t.Run("completions change no list", func(t *testing.T) {
		expectNone(t, func() {
			ref := messages.CompleteReference{Type: messages.RefPrompt, Name: "p"}
			require.NoError(t, srv.AddCompletion(ref, emptyCompletion))
			srv.RemoveCompletion(ref)
		})
	})

	t.Run("not to sessions that have not opened", func(t *testing.T) {
		barrier(t, pending)
		assert.Empty(t, pending.Notifications(""))
	})
}
