package session

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// The results of modern requests: every result carries resultType and the
// server's identity in _meta, a cacheable one its caching hints.

// discover is the result of server/discover for id.
func (m *Modern) discover(id messages.ID) []byte {
	b, err := messages.EncodeResult(id, &messages.DiscoverResult{
		ResultType:        messages.ResultComplete,
		SupportedVersions: messages.AllVersions,
		Capabilities:      m.cfg.Capabilities,
		Instructions:      m.cfg.Instructions,
		TTLMs:             m.opts.ListTTL.Milliseconds(),
		CacheScope:        messages.CachePublic,
		Meta:              m.serverMeta(),
	})
	if err != nil {
		return messages.EncodeError(id, messages.ErrInternal)
	}
	return b
}

// serverMeta is the _meta of every result: who answers.
func (m *Modern) serverMeta() messages.Meta {
	m.metaOnce.Do(m.encodeServerMeta)
	return m.meta // shared: only read
}

// serverMetaJSON is serverMeta, encoded.
func (m *Modern) serverMetaJSON() jsontext.Value {
	m.metaOnce.Do(m.encodeServerMeta)
	return m.metaJSON // shared: only read
}

func (m *Modern) encodeServerMeta() {
	info, _ := messages.Marshal(m.cfg.ServerInfo)
	m.meta = messages.Meta{messages.MetaKeyServerInfo: info}
	m.metaJSON, _ = messages.Marshal(m.meta)
}

// encodeResult is the final frame of a modern request answered by id:
// the handler's result with resultType, the server's identity, and for a
// cacheable result its caching hints; or the error it returned.
func (m *Modern) encodeResult(method string, id messages.ID, res any, err error) []byte {
	if err == nil {
		raw, merr := messages.Marshal(res)
		if merr == nil {
			// The common case: the fields go in front of the result's own
			// members. A result with a member of the same name (its own
			// _meta) fails the encoder's check for duplicate names and is
			// merged instead.
			if b, eerr := messages.EncodeResult(id, m.resultHead(method, raw)); eerr == nil {
				return b
			}
			var out []byte
			if out, merr = m.mergeResult(method, raw); merr == nil {
				if b, eerr := messages.EncodeResult(id, jsontext.Value(out)); eerr == nil {
					return b
				}
			}
		}
		m.log.Error("encoding a result failed", "method", method, "err", merr)
		err = messages.ErrInternal
	}
	var wire *messages.Error
	if !errors.As(err, &wire) {
		m.log.Error("handler failed", "method", method, "err", err)
		wire = messages.ErrInternal
	}
	if wire.Code == messages.CodeURLElicitationRequired || wire.Code == messages.CodeResourceNotFound {
		// Codes of the legacy era that a modern server never sends.
		wire = &messages.Error{Code: messages.CodeInvalidParams, Message: wire.Message, Data: wire.Data}
	}
	return messages.EncodeError(id, wire)
}

// modernResult is a modern result on the wire: the fields the server adds,
// then the members of the handler's result object (Result).
type modernResult struct {
	meta       jsontext.Value // the server's identity: serverMetaJSON
	ttlMs      int64
	cacheScope string // "" for a result that is not cacheable
	result     jsontext.Value
}

// errMemberTaken reports a result object with a member the server sets.
var errMemberTaken = errors.New("session: the result has a member the server sets")

// MarshalJSONTo writes r: the server's fields, then the result object's
// own members, token by token. A member the server sets too (a _meta of
// the handler's own) fails the encoder's check for duplicate names.
func (r *modernResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	dec := resultDecoders.Get().(*jsontext.Decoder)
	defer func() {
		dec.Reset(bytes.NewReader(nil)) // the pool keeps no result alive
		resultDecoders.Put(dec)
	}()
	dec.Reset(bytes.NewReader(r.result))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errors.Join(errMemberTaken, err)
	}
	err := errors.Join(enc.WriteToken(jsontext.BeginObject),
		enc.WriteToken(jsontext.String("resultType")), enc.WriteToken(jsontext.String(messages.ResultComplete)),
		enc.WriteToken(jsontext.String("_meta")), enc.WriteValue(r.meta))
	if r.cacheScope != "" {
		err = errors.Join(err, enc.WriteToken(jsontext.String("ttlMs")), enc.WriteToken(jsontext.Int(r.ttlMs)),
			enc.WriteToken(jsontext.String("cacheScope")), enc.WriteToken(jsontext.String(r.cacheScope)))
	}
	for err == nil && dec.PeekKind() != '}' {
		var name jsontext.Token
		var v jsontext.Value
		if name, err = dec.ReadToken(); err == nil {
			if err = enc.WriteToken(name); err == nil {
				if v, err = dec.ReadValue(); err == nil {
					err = enc.WriteValue(v)
				}
			}
		}
	}
	if err != nil {
		return err
	}
	return enc.WriteToken(jsontext.EndObject)
}

// resultDecoders are the decoders modernResult reads result objects with.
var resultDecoders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

// resultHead wraps raw, a result object of method, with the fields every
// modern result carries: resultType, the server's identity in _meta and,
// for a cacheable result, ttlMs and cacheScope.
func (m *Modern) resultHead(method string, raw jsontext.Value) *modernResult {
	r := &modernResult{meta: m.serverMetaJSON(), result: raw}
	r.ttlMs, r.cacheScope = m.cacheHints(method)
	return r
}

// cacheHints are the caching hints of a result of method: a list's live
// ListTTL and may be shared (public), a read is private and not kept; ""
// for a result that carries none.
func (m *Modern) cacheHints(method string) (ttlMs int64, scope string) {
	switch method {
	case messages.MethodListTools, messages.MethodListPrompts, messages.MethodListResources, messages.MethodListResourceTemplates:
		return m.opts.ListTTL.Milliseconds(), messages.CachePublic
	case messages.MethodReadResource:
		return 0, messages.CachePrivate
	}
	return 0, ""
}

// answer is the final frame of call c for turn t: its handler's result or
// error (encodeResult), except that a URLElicitationRequired error
// (-32042, which the modern era does not have) becomes input_required with
// the same URL elicitations; the retry runs the handler again.
func (m *Modern) answer(c *modernCall, t *turn, res any, err error) []byte {
	var wire *messages.Error
	if err == nil || !errors.As(err, &wire) || wire.Code != messages.CodeURLElicitationRequired || !c.mrtr {
		return m.encodeResult(c.req.Msg.Method, t.id, res, err)
	}
	var data messages.URLElicitationRequiredData
	if json.Unmarshal(wire.Data, &data) != nil || len(data.Elicitations) == 0 {
		return m.encodeResult(c.req.Msg.Method, t.id, res, err)
	}
	st := c.newState(1, time.Now().Add(m.opts.ParkTTL))
	reqs := make(map[string]messages.InputRequest, len(data.Elicitations))
	for i, e := range data.Elicitations {
		p := *e
		p.Mode, p.ElicitationID = messages.ElicitModeURL, "" // correlated by requestState now
		raw, merr := messages.Marshal(&p)
		if merr != nil {
			return m.encodeResult(c.req.Msg.Method, t.id, res, err)
		}
		key := "url_elicitation-" + strconv.Itoa(i+1)
		reqs[key] = messages.InputRequest{Method: messages.MethodElicit, Params: raw}
		st.Outstanding = append(st.Outstanding, asked{Key: key, Method: messages.MethodElicit, Digest: callDigest(messages.MethodElicit, raw)})
	}
	frame, eerr := messages.EncodeResult(t.id, &messages.InputRequiredResult{
		ResultType: messages.ResultInputRequired, InputRequests: reqs, RequestState: m.seal(st), Meta: m.serverMeta(),
	})
	if eerr != nil {
		return messages.EncodeError(t.id, messages.ErrInternal)
	}
	return frame
}

// mergeResult adds resultType, the server's identity in _meta (merged
// with the result's own) and, for a cacheable result, ttlMs and
// cacheScope to raw, a result object.
func (m *Modern) mergeResult(method string, raw []byte) ([]byte, error) {
	fields := map[string]any{}
	var obj map[string]jsontext.Value
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	meta := messages.Meta{}
	if old, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(old, &meta)
	}
	for k, v := range m.serverMeta() {
		meta[k] = v
	}
	for k, v := range obj {
		fields[k] = v
	}
	fields["_meta"] = meta
	fields["resultType"] = messages.ResultComplete
	if ttl, scope := m.cacheHints(method); scope != "" {
		fields["ttlMs"], fields["cacheScope"] = ttl, scope
	}
	return messages.Marshal(fields)
}
