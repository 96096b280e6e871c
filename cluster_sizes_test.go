package mcpactors_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// bigText returns n bytes of text that differ along their length, so that
// a chunk lost, doubled or put in the wrong place shows.
func bigText(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%08x", i)
	}
	return b.String()[:n]
}

// digest names a text by its size and hash.
func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%d bytes, sha256 %s", len(s), hex.EncodeToString(h[:]))
}

// sizeCatalog registers the tools of TestClusterCarriesAnySize: "echo"
// answers with the text it got, "elicit" asks the client for a text and
// answers with its digest, "put" stores a value of the given size in the
// session's data.
func sizeCatalog(srv *mcpactors.Server) {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(srv.AddTool(&messages.Tool{Name: "echo", InputSchema: jsontext.Value(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var args struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			return textResult(args.Text), nil
		}))
	must(srv.AddTool(&messages.Tool{Name: "elicit"},
		func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			res, err := sess.ElicitForm(ctx, &messages.ElicitParams{Message: "a long text, please",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"text":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			var content struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(res.Content, &content); err != nil {
				return nil, err
			}
			return textResult(digest(content.Text)), nil
		}))
	must(srv.AddTool(&messages.Tool{Name: "put", InputSchema: jsontext.Value(`{"type":"object","properties":{"size":{"type":"integer"}}}`)},
		func(ctx context.Context, sess *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var args struct {
				Size int `json:"size"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			if err := sess.PutData(ctx, "value", []byte(bigText(args.Size))); err != nil {
				return nil, err // a result with isError, which says why
			}
			return textResult("stored"), nil
		}))
}

// TestClusterCarriesAnySize: on a three-node cluster whose HTTP endpoints
// take bodies of up to 16 MiB, a session is owned by n1 and every request
// lands on n2: requests and results of 2 MiB and 8 MiB cross (NATS carries
// 1 MiB in one message), and so does an elicitation answer of that size
// POSTed to n3. A session's data is bounded by what one durable write
// carries, and PutData says so.
func TestClusterCarriesAnySize(t *testing.T) {
	c := startHTTPCluster(t, 3, "sizes", sizeCatalog, &mcpactors.HTTPOptions{MaxBodyBytes: 16 << 20})
	n1, n2, n3 := 0, 1, 2
	sid := openSession(t, c.urls[n1], `{"elicitation":{}}`)
	require.True(t, strings.HasPrefix(sid, "n1."))
	id := 0

	for _, size := range []int{2 << 20, 8 << 20} {
		t.Run(fmt.Sprintf("%d MiB", size>>20), func(t *testing.T) {
			before := []int64{c.stats(n1).ChunkedIn, c.stats(n2).ChunkedIn}

			// A request of size bytes on n2 reaches the owner; its result
			// of size bytes comes back to n2.
			text := bigText(size)
			id++
			echo := startCall(t, c.urls[n2], sid, toolCall(id, "echo", `{"text":"`+text+`"}`, ""))
			require.Equal(t, http.StatusOK, <-echo.status)
			res := callResult(t, decoded(t, echo.next()))
			require.False(t, res.IsError, "%.200s", firstText(t, res))
			assert.Equal(t, digest(text), digest(firstText(t, res)), "the result is the request's text, whole")

			// An elicitation whose answer of size bytes is POSTed to n3.
			id++
			call := startCall(t, c.urls[n2], sid, toolCall(id, "elicit", `{}`, ""))
			require.Equal(t, http.StatusOK, <-call.status)
			ask := decoded(t, call.next())
			require.Equal(t, messages.MethodElicit, ask.Method)
			answer := `{"jsonrpc":"2.0","id":` + string(ask.ID.Raw()) + `,"result":{"action":"accept","content":{"text":"` + text + `"}}}`
			ctx, cancel := context.WithTimeout(context.Background(), httpWait)
			defer cancel()
			resp := send(t, ctx, c.urls[n3], sid, []byte(answer))
			_, _ = io.Copy(io.Discard, resp.Body)
			require.Equal(t, http.StatusAccepted, resp.StatusCode, "the answer reached the session")
			res = callResult(t, decoded(t, call.next()))
			assert.Equal(t, digest(text), firstText(t, res), "the handler got the answer whole")

			assert.Equal(t, before[0]+2, c.stats(n1).ChunkedIn, "the request and the answer came to the owner in chunks")
			assert.Equal(t, before[1]+1, c.stats(n2).ChunkedIn, "the result came to n2 in chunks")
			for i := range c.nodes {
				assert.Zero(t, c.stats(i).PartialsDropped, "n%d dropped nothing", i+1)
			}
		})
	}

	t.Run("data bounded by one durable write", func(t *testing.T) {
		max := access.Router(c.servers[n1]).(interface{ MaxStateBytes() int }).MaxStateBytes()
		require.Positive(t, max)
		put := func(size int) *messages.CallToolResult {
			t.Helper()
			id++
			call := startCall(t, c.urls[n2], sid, toolCall(id, "put", fmt.Sprintf(`{"size":%d}`, size), ""))
			return callResult(t, decoded(t, call.next()))
		}
		res := put(max)
		require.True(t, res.IsError, "a value as large as one write does not fit in base64")
		assert.Contains(t, firstText(t, res), fmt.Sprintf("it must fit in %d bytes", max))
		assert.Contains(t, firstText(t, res), `under "value"`)

		size := max * 3 / 4 * 95 / 100 // base64 of it, and the rest of the state, fit
		res = put(size)
		require.False(t, res.IsError, "%s", firstText(t, res))

		// The state is durable: the directory has it, with the value.
		js, err := jetstream.New(c.nodes[n3].Conn())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), httpWait)
		defer cancel()
		kv, err := js.KeyValue(ctx, "mcpx_sizes_sessions")
		require.NoError(t, err)
		var record struct {
			State struct {
				Data map[string][]byte `json:"data"`
			} `json:"state"`
		}
		e, err := kv.Get(ctx, sid) // PutData returned: its write is acknowledged
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(e.Value(), &record))
		assert.Len(t, record.State.Data["value"], size, "the session's directory record holds the value")
		assert.Equal(t, bigText(size), string(record.State.Data["value"]))
		assert.Zero(t, c.stats(n1).WriteFailures)
	})
}
