package faults_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modernAnswer is what the test reads of a 2026-07-28 tools/call answer.
type modernAnswer struct {
	ID     jsontext.Value `json:"id"`
	Result *struct {
		ResultType    string                    `json:"resultType"`
		RequestState  string                    `json:"requestState"`
		InputRequests map[string]jsontext.Value `json:"inputRequests"`
		Content       []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// postElicitation sends a 2026-07-28 tools/call of test_elicitation to n
// (a retry when state is set, answering with answers), and returns every
// message of its answer.
func postElicitation(ctx context.Context, n *node, id int, state, answers string) ([]modernAnswer, error) {
	params := `{"name":"test_elicitation","arguments":{"message":"who?"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	if state != "" {
		params += `,"requestState":"` + state + `","inputResponses":` + answers
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params+"}")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.endpoint(), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "test_elicitation")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	var out []modernAnswer
	err = eachMessage(resp, func(m rpcMessage) {
		var a modernAnswer
		if json.Unmarshal([]byte(m.raw), &a) == nil {
			out = append(out, a)
		}
	})
	return out, err
}

// TestModernPauseContinuationNode: a 2026-07-28 call's handler waits on
// n1 (its continuation) for the user's answer; n1 is paused (SIGSTOP),
// and the retry with the answer lands on n2.
//
// What the client sees: n1 does not take the forwarded retry in time (2
// s), so n2 runs the handler again, answers its question from the journal
// the requestState carries, and the call completes with the answer — not
// asked again — within a few seconds. When n1 resumes, its late run of the
// retry reaches no other request: a call on n2 afterwards gets exactly
// its own answer, and every request ended.
func TestModernPauseContinuationNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and pauses a node")
	}
	c := startCluster(t, faultLease)
	n1, n2 := c.byID("n1"), c.byID("n2")
	ctx, cancel := context.WithTimeout(t.Context(), 2*callBound)
	defer cancel()

	first, err := postElicitation(ctx, n1, 1, "", "")
	require.NoError(t, err)
	require.Len(t, first, 1)
	require.NotNil(t, first[0].Result, "%+v", first[0].Error)
	require.Equal(t, "input_required", first[0].Result.ResultType)
	require.Contains(t, first[0].Result.InputRequests, "elicitation-1")
	answer := `{"elicitation-1":{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}}`

	n1.pause()
	paused := time.Now()
	retry, err := postElicitation(ctx, n2, 2, first[0].Result.RequestState, answer)
	took := time.Since(paused)
	n1.resume()
	require.NoError(t, err)
	t.Logf("the retry was answered %s after n1 paused", took.Round(time.Millisecond))
	require.Len(t, retry, 1, "one answer on the retry's stream")
	require.NotNil(t, retry[0].Result, "%+v", retry[0].Error)
	assert.Equal(t, "complete", retry[0].Result.ResultType, "answered from the journal: not asked again")
	require.NotEmpty(t, retry[0].Result.Content)
	assert.Contains(t, retry[0].Result.Content[0].Text, `"username":"ada"`)
	assert.Equal(t, "2", string(retry[0].ID))
	assert.Less(t, took, failoverSlack, "the forward's bound (2 s) and a run of the handler")

	// n1's late run must not reach anyone else's stream.
	again, err := postElicitation(ctx, n2, 3, "", "")
	require.NoError(t, err)
	require.Len(t, again, 1)
	assert.Equal(t, "3", string(again[0].ID))
	require.NotNil(t, again[0].Result)
	assert.Equal(t, "input_required", again[0].Result.ResultType)
}
