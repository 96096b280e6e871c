package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// requestState is what an input_required result's requestState carries,
// sealed (internal/sealed): the client cannot read or change it. Its
// format version is V; a node refuses a version it does not know.
type requestState struct {
	V int `json:"v"`
	// Cont is the continuation that waits for the retry ("" when none
	// was kept: the parking bound was reached), and Round the round the
	// retry answers (1 for the first input_required).
	Cont  string `json:"c,omitempty"`
	Round int    `json:"r"`
	// Principal, Method and Digest bind the state to who asked what: a
	// retry by another principal, of another method, tool, prompt,
	// resource or arguments is refused.
	Principal string `json:"p,omitempty"`
	Method    string `json:"m"`
	Digest    []byte `json:"d"`
	// RawDigest digests the arguments as the client sent them: a retry
	// that sends them again byte for byte (as clients do) is matched
	// without putting them in canonical form. A state without it (an
	// older release's) is matched by Digest alone.
	RawDigest []byte `json:"dr,omitempty"`
	// Expires is when the state lapses (Unix milliseconds).
	Expires int64 `json:"e"`
	// Outstanding are the input requests of this round, by key.
	Outstanding []asked `json:"o,omitempty"`
	// Journal holds the answers of earlier rounds: a handler run again
	// (its continuation gone) gets them back without asking again.
	Journal []answered `json:"j,omitempty"`
	// Seed makes the IDs of the request's URL elicitations, the same on
	// every run of its handler.
	Seed string `json:"s,omitempty"`
	// JournalKey names the journal in the spill store (ModernOptions.Spill)
	// when it was too large to ride here; JournalSum is a digest of it.
	JournalKey string `json:"jk,omitempty"`
	JournalSum []byte `json:"js,omitempty"`
}

// stateVersion is the format of requestState this release writes and
// reads.
const stateVersion = 1

// asked is one input request of a round.
type asked struct {
	Key    string `json:"k"`
	Method string `json:"m"`
	Digest []byte `json:"d"`
}

// answered is one answered input request: the call (method and a digest
// of its params) and the client's answer.
type answered struct {
	Method string         `json:"m"`
	Digest []byte         `json:"d"`
	Result jsontext.Value `json:"a"`
}

// digestLen is the length of the digests kept: 128 bits of SHA-256.
const digestLen = 16

// callDigest digests a server-to-client call: its method and its params
// as encoded (deterministically: json.Deterministic).
func callDigest(method string, params []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write(params)
	return h.Sum(nil)[:digestLen]
}

// reqDigests are the digests that bind a requestState to its request.
type reqDigests struct{ canonical, raw []byte }

// requestDigest digests what identifies a request for its requestState:
// the method, and its name or URI and arguments, whatever the order of
// the arguments' keys.
func requestDigest(method string, m *messages.RequestMeta) []byte {
	args := requestArgs(m)
	if len(args) > 0 {
		// RFC 8785 canonical form: the same arguments digest alike
		// whatever their keys' order or spacing.
		canon := jsontext.Value(bytes.Clone(args))
		if canon.Canonicalize() == nil {
			args = canon
		}
	}
	return digestOf(method, m, args)
}

// rawRequestDigest digests the request as requestDigest does, but its
// arguments as sent.
func rawRequestDigest(method string, m *messages.RequestMeta) []byte {
	return digestOf(method, m, requestArgs(m))
}

// requestArgs returns the request's arguments, nil when it has none.
func requestArgs(m *messages.RequestMeta) []byte {
	if args := bytes.TrimSpace(m.Arguments); len(args) > 0 && string(args) != "null" {
		return args
	}
	return nil
}

func digestOf(method string, m *messages.RequestMeta, args []byte) []byte {
	h := sha256.New()
	for _, s := range []string{method, m.Name, m.URI} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(args)
	return h.Sum(nil)[:digestLen]
}

// matches reports whether the request (method, meta) is the one st was
// sealed for: its arguments byte for byte, or else in canonical form.
func (st *requestState) matches(method string, meta *messages.RequestMeta) bool {
	if st.Method != method {
		return false
	}
	if len(st.RawDigest) > 0 && bytes.Equal(st.RawDigest, rawRequestDigest(method, meta)) {
		return true
	}
	return bytes.Equal(st.Digest, requestDigest(method, meta))
}

// errBadState is what a client is told of a requestState that cannot be
// used, whatever the reason: nothing decoded is revealed.
var errBadState = messages.Errorf(messages.CodeInvalidParams, "invalid params: requestState is not valid for this request (send the request again without it)")

// openState opens and checks a retry's requestState: sealed by a key of
// ours, unexpired, of this principal, for this method and these params.
func (m *Modern) openState(sealedState, principal, method string, meta *messages.RequestMeta, now time.Time) (*requestState, *messages.Error) {
	plain, err := m.opts.Sealer.Open(sealedState)
	if err != nil {
		return nil, errBadState
	}
	var st requestState
	if json.Unmarshal(plain, &st) != nil || st.V != stateVersion {
		return nil, errBadState
	}
	if now.UnixMilli() >= st.Expires || st.Principal != principal || !st.matches(method, meta) {
		return nil, errBadState
	}
	return &st, nil
}

// seal seals st.
func (m *Modern) seal(st *requestState) string {
	st.V = stateVersion
	b, _ := json.Marshal(st)
	return m.opts.Sealer.Seal(b)
}

// journal is the answers a handler run gets back before asking: each
// entry is taken once, by the first call of the same method and params.
type journal struct {
	entries []answered
	taken   []bool
}

// take returns the answer to the call (method, digest), once.
func (j *journal) take(method string, digest []byte) (jsontext.Value, bool) {
	for i, e := range j.entries {
		if !j.taken[i] && e.Method == method && bytes.Equal(e.Digest, digest) {
			j.taken[i] = true
			return e.Result, true
		}
	}
	return nil, false
}

func newJournal(entries []answered) *journal {
	return &journal{entries: entries, taken: make([]bool, len(entries))}
}

// spilledJournal reads the journal a state left in the spill store; nil
// (the handler asks again) when it cannot be read or does not match.
func (m *Modern) spilledJournal(ctx context.Context, st *requestState) []answered {
	if st.JournalKey == "" || m.opts.Spill == nil {
		return st.Journal
	}
	data, err := m.opts.Spill.Get(ctx, st.JournalKey)
	if err != nil {
		m.log.Warn("a spilled journal could not be read: its calls are asked again", "err", err)
		return nil
	}
	sum := sha256.Sum256(data)
	var entries []answered
	if !bytes.Equal(sum[:digestLen], st.JournalSum) || json.Unmarshal(data, &entries) != nil {
		m.log.Warn("a spilled journal does not match its requestState: its calls are asked again")
		return nil
	}
	return entries
}
