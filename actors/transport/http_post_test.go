package transport_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// elicitCaps declares form elicitation (2025-11-25 shape).
var elicitCaps = messages.ClientCapabilities{Elicitation: &messages.ElicitationCapabilities{Form: &messages.Empty{}}}

// TestHTTPPostAnswers checks how a POST is answered for each kind of
// message (transports.mdx, "Sending Messages to the Server", 4–6).
func TestHTTPPostAnswers(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, elicitCaps)

	// 4: a notification or response the server accepts gets 202 and no body.
	t.Run("notification: 202 without a body", func(t *testing.T) {
		r := c.post(notification(t, messages.MethodCancelled, &messages.CancelledParams{RequestID: messages.StringID("nothing running")}), nil)
		assert.Equal(t, http.StatusAccepted, r.status)
		assert.Empty(t, r.body)
	})
	t.Run("response to an ID never sent: 202, the session goes on", func(t *testing.T) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":"never-sent","result":{}}`,
			`{"jsonrpc":"2.0","id":424242,"error":{"code":-32000,"message":"no"}}`,
		} {
			r := c.post([]byte(body), nil)
			assert.Equal(t, http.StatusAccepted, r.status, body)
			assert.Empty(t, r.body)
		}
		assert.Nil(t, c.call(messages.MethodPing, nil).Error)
	})

	// 5: a request whose handler sends nothing but the result is answered
	// with one JSON object.
	t.Run("request with only a result: JSON", func(t *testing.T) {
		body, id := c.request(messages.MethodCallTool, toolParams("test_echo", map[string]any{"text": "hi"}, nil))
		r := c.post(body, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, mtJSON, r.contentType())
		assert.Equal(t, "hi", resultText(t, r.response(t, id)))
	})

	// 6: a request whose handler sends something first gets an SSE stream;
	// on 2025-11-25 it starts with a priming event (an ID, a retry field
	// and empty data), and every event has an ID, unique in the session.
	for _, tc := range []struct {
		name   string
		tool   string
		token  any
		method string // of the messages before the response
		n      int
	}{
		{"progress first: SSE", "test_tool_with_progress", "tok", messages.MethodProgress, 3},
		{"logs first: SSE", "test_tool_with_logging", nil, messages.MethodLogMessage, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, id := c.request(messages.MethodCallTool, toolParams(tc.tool, nil, tc.token))
			r := c.post(body, nil)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, mtSSE, r.contentType())
			assert.Equal(t, "no-cache", r.header.Get("Cache-Control"))
			require.NoError(t, r.endErr, "the stream ends cleanly after the response")
			require.NotEmpty(t, r.events)
			checkPriming(t, r.events[0])
			seen := map[string]bool{}
			for _, ev := range r.events {
				require.True(t, ev.HasID, "an event without an ID: %+v", ev)
				assert.False(t, seen[ev.ID], "event ID %s used twice", ev.ID)
				seen[ev.ID] = true
			}
			msgs := r.messages(t)
			require.Len(t, msgs, tc.n+1)
			for _, m := range msgs[:tc.n] {
				assert.Equal(t, messages.KindNotification, m.Kind())
				assert.Equal(t, tc.method, m.Method)
			}
			assert.NotEmpty(t, resultText(t, r.response(t, id)))
		})
	}

	t.Run("elicitation first: SSE, answered by a POST", func(t *testing.T) {
		body, id := c.request(messages.MethodCallTool, toolParams("ask", nil, nil))
		s := c.stream(http.MethodPost, body, nil)
		checkPriming(t, s.nextEvent())
		ask, ev := s.nextMessage()
		assert.True(t, ev.HasID)
		require.Equal(t, messages.KindRequest, ask.Kind())
		require.Equal(t, messages.MethodElicit, ask.Method)

		answer := `{"jsonrpc":"2.0","id":` + ask.ID.Raw() + `,"result":{"action":"accept","content":{"name":"ada"}}}`
		r := c.post([]byte(answer), nil)
		require.Equal(t, http.StatusAccepted, r.status)
		assert.Empty(t, r.body)

		m, ev := s.nextMessage()
		assert.True(t, ev.HasID)
		assert.Equal(t, id, m.ID)
		assert.Equal(t, "name=ada", resultText(t, m))
		assert.NoError(t, recv(t, f.askErr, "the elicitation's outcome"))
		assert.NoError(t, s.ended(), "the stream ends after the response")
	})
}

// checkPriming asserts that ev is a 2025-11-25 priming event: an event ID,
// a retry field and empty data (transports.mdx, "Sending Messages to the
// Server" 6).
func checkPriming(t *testing.T, ev sseEvent) {
	t.Helper()
	assert.True(t, ev.isPriming(), "not a priming event: %+v", ev)
	assert.NotEmpty(t, ev.ID, "the priming event has no ID")
	assert.Equal(t, "1000", ev.Retry, "the priming event carries the retry delay (default 1 s)")
}

// TestHTTPPostRefusals checks the HTTP status and JSON-RPC error of each
// kind of bad POST, and that the session goes on after all of them.
func TestHTTPPostRefusals(t *testing.T) {
	const maxBody = 4 << 10
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{MaxBodyBytes: maxBody}})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	atLimit, _ := pingOfSize(t, maxBody)
	overLimit, _ := pingOfSize(t, maxBody+1)
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`

	tests := []struct {
		name   string
		rule   string // what the case checks
		body   string
		hdr    http.Header
		status int
		code   int64  // JSON-RPC error code in the body; 0: none expected
		id     string // raw ID of the error; "" for null
		text   string // in the error message
	}{
		// transports.mdx "Sending Messages" 2: Accept lists both types.
		{name: "Accept: JSON only", body: ping, hdr: http.Header{"Accept": {mtJSON}}, status: http.StatusNotAcceptable, code: messages.CodeInvalidRequest, text: "Accept"},
		{name: "Accept: SSE only", body: ping, hdr: http.Header{"Accept": {mtSSE}}, status: http.StatusNotAcceptable, code: messages.CodeInvalidRequest},
		{name: "no Accept", body: ping, hdr: http.Header{"Accept": {""}}, status: http.StatusNotAcceptable, code: messages.CodeInvalidRequest},
		{name: "Accept: */*", body: ping, hdr: http.Header{"Accept": {"*/*"}}, status: http.StatusOK},
		{name: "Accept: both with q-values", body: ping, hdr: http.Header{"Accept": {"application/json;q=0.9, text/event-stream;q=0.5"}}, status: http.StatusOK},
		// The body is JSON: anything else is 415, with a message saying so.
		{name: "Content-Type: text/plain", body: ping, hdr: http.Header{"Content-Type": {"text/plain"}}, status: http.StatusUnsupportedMediaType, code: messages.CodeInvalidRequest, text: "Content-Type must be application/json"},
		{name: "no Content-Type", body: ping, hdr: http.Header{"Content-Type": {""}}, status: http.StatusUnsupportedMediaType, code: messages.CodeInvalidRequest, text: "Content-Type must be application/json"},
		{name: "Content-Type with charset", body: ping, hdr: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, status: http.StatusOK},
		// MaxBodyBytes bounds a body.
		{name: "body at MaxBodyBytes", body: atLimit, status: http.StatusOK},
		{name: "body over MaxBodyBytes", body: overLimit, status: http.StatusRequestEntityTooLarge, code: messages.CodeInvalidRequest, text: "too large"},
		// JSON-RPC 2.0 §5.1: parse error, invalid request.
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,`, status: http.StatusBadRequest, code: messages.CodeParseError},
		{name: "not an object", body: `"ping"`, status: http.StatusBadRequest, code: messages.CodeInvalidRequest},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":7,"method":"ping"}`, status: http.StatusBadRequest, code: messages.CodeInvalidRequest, id: "7"},
		{name: "no method, result or error", body: `{"jsonrpc":"2.0","id":8}`, status: http.StatusBadRequest, code: messages.CodeInvalidRequest, id: "8"},
		{name: "params a string", body: `{"jsonrpc":"2.0","id":9,"method":"ping","params":"x"}`, status: http.StatusBadRequest, code: messages.CodeInvalidRequest, id: "9"},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, status: http.StatusBadRequest, code: messages.CodeInvalidRequest},
		// A valid request the server cannot serve is answered with 200 and
		// the JSON-RPC error.
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":10,"method":"no/such/method"}`, status: http.StatusOK, code: messages.CodeMethodNotFound, id: "10"},
		{name: "tools/call params an array", body: `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1,2]}`, status: http.StatusOK, code: messages.CodeInvalidParams, id: "11"},
		{name: "tools/call name not a string", body: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}`, status: http.StatusOK, code: messages.CodeInvalidParams, id: "12"},
		{name: "tools/call unknown tool", body: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, status: http.StatusOK, code: messages.CodeInvalidParams, id: "13", text: "no_such_tool"},
		{name: "logging/setLevel unknown level", body: `{"jsonrpc":"2.0","id":14,"method":"logging/setLevel","params":{"level":"loud"}}`, status: http.StatusOK, code: messages.CodeInvalidParams, id: "14"},
		// JSON-RPC batches were removed in 2025-06-18.
		{name: "batch on 2025-11-25", body: batch, status: http.StatusBadRequest, code: messages.CodeInvalidRequest, text: "batch"},
		{name: "batch on 2025-06-18", body: batch, hdr: http.Header{transport.HeaderProtocolVersion: {messages.Version20250618}}, status: http.StatusBadRequest, code: messages.CodeInvalidRequest, text: "batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.post([]byte(tt.body), tt.hdr)
			require.Equal(t, tt.status, r.status, "body: %s", r.body)
			if tt.status == http.StatusOK && tt.code == 0 {
				return
			}
			assert.Equal(t, mtJSON, r.contentType())
			if tt.code == 0 {
				return
			}
			assert.Equal(t, tt.code, r.errorCode(t), "body: %s", r.body)
			wantID := tt.id
			if wantID == "" {
				wantID = "null"
			}
			assert.Equal(t, wantID, r.msg.ID.Raw(), "the error answers the request's ID when readable")
			assert.Contains(t, r.msg.Error.Message, tt.text)
		})
	}

	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
}

// TestHTTPBatch2025_03_26 checks that a client of 2025-03-26 (no
// MCP-Protocol-Version header) may send a JSON-RPC batch: its requests are
// answered on one SSE stream that ends when all are answered, and its
// notifications and responses are delivered (2025-03-26 transports.mdx,
// "Sending Messages to the Server" 3–5).
func TestHTTPBatch2025_03_26(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.sid = c.initializeOnly(messages.Version20250326, messages.ClientCapabilities{})
	require.Zero(t, f.srv.OpenSessions(), "the session opens with notifications/initialized")

	t.Run("requests and notifications", func(t *testing.T) {
		batch := `[` +
			`{"jsonrpc":"2.0","method":"notifications/initialized"},` +
			`{"jsonrpc":"2.0","id":"b1","method":"ping"},` +
			`{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"test_echo","arguments":{"text":"two"}}},` +
			`{"jsonrpc":"2.0","id":"b3","method":"tools/call","params":{"name":"test_tool_with_progress","_meta":{"progressToken":"p3"}}},` +
			`{"jsonrpc":"2.0","id":"never-sent","result":{}},` +
			`{"jsonrpc":"2.0","id":"b4","method":"no/such/method"}` +
			`]`
		r := c.post([]byte(batch), nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		require.Equal(t, mtSSE, r.contentType())
		require.NoError(t, r.endErr)
		answers := map[string]*messages.Message{}
		progress := 0
		for _, m := range r.messages(t) {
			switch m.Kind() {
			case messages.KindResponse, messages.KindError:
				require.NotContains(t, answers, m.ID.String(), "answered twice")
				answers[m.ID.String()] = m
			case messages.KindNotification:
				assert.Equal(t, messages.MethodProgress, m.Method)
				progress++
			}
		}
		require.Len(t, answers, 4)
		assert.Nil(t, answers["b1"].Error)
		assert.Equal(t, "two", resultText(t, answers["b2"]))
		assert.NotEmpty(t, resultText(t, answers["b3"]))
		assert.Equal(t, 3, progress, "b3's progress goes on the batch's stream")
		require.NotNil(t, answers["b4"].Error)
		assert.EqualValues(t, messages.CodeMethodNotFound, answers["b4"].Error.Code)
		// notifications/initialized, delivered before the requests, opened
		// the session.
		assert.Equal(t, 1, f.srv.OpenSessions())
	})

	t.Run("only notifications and responses: 202", func(t *testing.T) {
		r := c.post([]byte(`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}},{"jsonrpc":"2.0","id":"y","result":{}}]`), nil)
		assert.Equal(t, http.StatusAccepted, r.status)
		assert.Empty(t, r.body)
	})

	t.Run("bad items are answered, the rest served", func(t *testing.T) {
		r := c.post([]byte(`[{"jsonrpc":"1.0","id":"bad","method":"ping"},{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}},{"jsonrpc":"2.0","id":"ok","method":"ping"}]`), nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		codes := map[string]int64{}
		for _, m := range r.messages(t) {
			if m.Error != nil {
				codes[m.ID.String()] = m.Error.Code
			} else {
				codes[m.ID.String()] = 0
			}
		}
		assert.Equal(t, map[string]int64{"bad": messages.CodeInvalidRequest, "init": messages.CodeInvalidRequest, "ok": 0}, codes)
	})

	t.Run("empty or malformed batch: 400", func(t *testing.T) {
		for body, code := range map[string]int64{`[]`: messages.CodeInvalidRequest, `[{"jsonrpc"`: messages.CodeParseError} {
			r := c.post([]byte(body), nil)
			require.Equal(t, http.StatusBadRequest, r.status, body)
			assert.Equal(t, code, r.errorCode(t), body)
		}
	})

	t.Run("the same batch with a 2025-03-26 header is served too", func(t *testing.T) {
		r := c.post([]byte(`[{"jsonrpc":"2.0","id":"h1","method":"ping"}]`), http.Header{transport.HeaderProtocolVersion: {messages.Version20250326}})
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		msgs := r.messages(t)
		require.Len(t, msgs, 1)
		assert.Equal(t, "h1", msgs[0].ID.String())
	})
}
