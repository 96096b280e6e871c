package reftools

import (
	"context"
	"hash/maphash"
	"strconv"
	"sync"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// counterKey is the per-session data key test_counter keeps its count in
// and test_counter_get reads.
const counterKey = "counter"

// counterLocks serialise test_counter's read-increment-write per session
// within one process: two calls of one session that run at once (a
// client's retry beside a late original, say) must not read the same
// value. Striped by session ID, so that nothing grows with the sessions.
// Across processes nothing is serialised here on purpose: that is the
// cluster's job (one owner at a time), and what the tool exposes.
type counterLocks struct {
	seed  maphash.Seed
	locks [64]sync.Mutex
}

func newCounterLocks() *counterLocks { return &counterLocks{seed: maphash.MakeSeed()} }

// of returns the lock of session id.
func (c *counterLocks) of(id string) *sync.Mutex {
	return &c.locks[maphash.String(c.seed, id)%uint64(len(c.locks))]
}

// addSessionTools adds the tools that keep per-session data, and
// test_hold, which shows where a session's handlers run.
func (s *refSet) addSessionTools() error {
	locks := newCounterLocks()
	err := s.addTools([]tool{
		{&messages.Tool{Name: "test_counter", Description: "Increments a counter kept in the session's data (key \"counter\", from 0) and returns the new value, e.g. \"1\"", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				mu := locks.of(sess.ID())
				mu.Lock()
				defer mu.Unlock()
				n, err := incrementCounter(ctx, sess)
				if err != nil {
					return nil, err
				}
				if n < 0 {
					return toolError("the session's counter holds no number"), nil
				}
				return text(strconv.FormatInt(n, 10)), nil
			}},
		// No lock: a read sees the counter before or after an increment
		// that runs at once, either of which is right.
		{&messages.Tool{Name: "test_counter_get", Description: "Returns the counter test_counter keeps in the session's data (key \"counter\"), \"0\" before any increment, without changing it", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				n, err := readCounter(ctx, sess)
				if err != nil {
					return nil, err
				}
				if n < 0 {
					return toolError("the session's counter holds no number"), nil
				}
				return text(strconv.FormatInt(n, 10)), nil
			}},
	})
	if err != nil {
		return err
	}
	return s.addHoldTool()
}

// readCounter returns the session's counter: 0 when there is none, -1
// when the stored value is not a number.
func readCounter(ctx context.Context, sess *mcpactors.Session) (int64, error) {
	raw, found, err := sess.GetData(ctx, counterKey)
	if err != nil || !found {
		return 0, err
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 {
		return -1, nil
	}
	return n, nil
}

// incrementCounter adds one to the session's counter and returns the new
// value, or -1 when the stored value is not a number (left as it is).
func incrementCounter(ctx context.Context, sess *mcpactors.Session) (int64, error) {
	n, err := readCounter(ctx, sess)
	if err != nil || n < 0 {
		return n, err
	}
	n++
	if err := sess.PutData(ctx, counterKey, []byte(strconv.FormatInt(n, 10))); err != nil {
		return 0, err
	}
	return n, nil
}
