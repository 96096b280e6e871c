package session

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"strconv"
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
	m.metaOnce.Do(func() {
		info, _ := messages.Marshal(m.cfg.ServerInfo)
		m.meta = messages.Meta{messages.MetaKeyServerInfo: info}
	})
	return m.meta // shared: only read
}

// encodeResult is the final frame of a modern request answered by id:
// the handler's result with resultType, the server's identity, and for a
// cacheable result its caching hints; or the error it returned.
func (m *Modern) encodeResult(method string, id messages.ID, res any, err error) []byte {
	if err == nil {
		if b, eerr := messages.EncodeResult(id, res); eerr == nil {
			if out, ok := m.spliceHead(method, id, b); ok {
				return out
			}
		}
		// The result has a _meta of its own: merged, the slow way.
		raw, merr := messages.Marshal(res)
		if merr == nil {
			if out, werr := m.wrapResult(method, raw); werr == nil {
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

// spliceHead puts a modern result's fields (resultHead) at the start of
// the result object of frame, an encoded response to id, without decoding
// it; ok is false for a result with a _meta of its own (merged by
// wrapResult instead).
func (m *Modern) spliceHead(method string, id messages.ID, frame []byte) ([]byte, bool) {
	raw := id.Raw()
	const pre, mid = `{"jsonrpc":"2.0","id":`, `,"result":{`
	n := len(pre) + len(raw) + len(mid)
	if len(frame) < n+1 || string(frame[:len(pre)]) != pre || string(frame[len(pre):len(pre)+len(raw)]) != raw ||
		string(frame[len(pre)+len(raw):n]) != mid || bytes.Contains(frame[n:], []byte(`"_meta"`)) {
		return nil, false
	}
	head := m.resultHead(method)
	out := make([]byte, 0, len(frame)+len(head)+1)
	out = append(out, frame[:n]...)
	out = append(out, head[1:]...) // the fields, without head's "{"
	if frame[n] != '}' {
		out = append(out, ',')
	}
	return append(out, frame[n:]...), true
}

// resultHead is the start of a wrapped result object of method, up to
// its first field: "{" and the fields wrapResult adds.
func (m *Modern) resultHead(method string) []byte {
	if h, ok := m.heads.Load(method); ok {
		return h.([]byte)
	}
	info, _ := messages.Marshal(m.cfg.ServerInfo)
	h := []byte(`{"resultType":"complete","_meta":{"` + messages.MetaKeyServerInfo + `":` + string(info) + `}`)
	switch method {
	case messages.MethodListTools, messages.MethodListPrompts, messages.MethodListResources, messages.MethodListResourceTemplates:
		h = append(h, `,"ttlMs":`+strconv.FormatInt(m.opts.ListTTL.Milliseconds(), 10)+`,"cacheScope":"public"`...)
	case messages.MethodReadResource:
		h = append(h, `,"ttlMs":0,"cacheScope":"private"`...)
	}
	m.heads.Store(method, h)
	return h
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

// wrapResult adds resultType, the server's identity in _meta and, for a
// cacheable result, ttlMs and cacheScope to a result object.
func (m *Modern) wrapResult(method string, raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) >= 2 && raw[0] == '{' && !bytes.Contains(raw, []byte(`"_meta"`)) {
		// The common case, without decoding: the fields go in front.
		head := m.resultHead(method)
		out := make([]byte, 0, len(head)+len(raw))
		out = append(out, head...)
		if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, raw[1:]...), nil
	}
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
	switch method {
	case messages.MethodListTools, messages.MethodListPrompts, messages.MethodListResources, messages.MethodListResourceTemplates:
		fields["ttlMs"], fields["cacheScope"] = m.opts.ListTTL.Milliseconds(), messages.CachePublic
	case messages.MethodReadResource:
		fields["ttlMs"], fields["cacheScope"] = 0, messages.CachePrivate
	}
	return messages.Marshal(fields)
}
