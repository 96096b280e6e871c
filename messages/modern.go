package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strings"
)

// The modern era (revision 2026-07-28 on): no initialize and no session;
// every request carries its version and the client's capabilities in
// params._meta, and a server that needs the client answers input_required
// (Multi Round-Trip Requests) instead of sending it requests.

// Version20260728 is the first revision of the modern era.
const Version20260728 = "2026-07-28"

// AllVersions lists every revision we speak, newest first: what an
// UnsupportedProtocolVersion error and server/discover name.
var AllVersions = []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// IsModernVersion reports whether v is a modern revision we speak.
func IsModernVersion(v string) bool { return v == Version20260728 }

// LooksModern reports whether v names a revision of the modern era or
// later, known or not (revisions are dates, compared as strings).
func LooksModern(v string) bool { return len(v) == len(Version20260728) && v >= Version20260728 }

// Methods of the modern era.
const (
	MethodDiscover                  = "server/discover"
	MethodSubscriptionsListen       = "subscriptions/listen"
	MethodSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// Keys of a modern request's and result's _meta.
const (
	MetaKeyProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaKeyClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaKeyLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaKeyServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaKeySubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes of the modern era.
const (
	// CodeHeaderMismatch: the HTTP headers that mirror the body are
	// missing, malformed or do not match it.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: serving the request needs a capability
	// the request's clientCapabilities do not declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the request's revision is not one we
	// speak; data lists those we do.
	CodeUnsupportedProtocolVersion = -32022
)

// ModernStreams is the owner, in place of a session, of the streams that
// carry modern requests' answers (router.Streams binds every stream to
// one sender): no session ID can be it.
const ModernStreams = "!modern"

// Result types.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// ModernRequest is one client request of the modern era (2026-07-28 on),
// as a transport hands it over: it names no session, and carries what a
// session knew (version, capabilities) in Meta.
type ModernRequest struct {
	Principal string
	Msg       *Message
	// Meta is the request's _meta, read and checked by the transport.
	Meta *RequestMeta
	// Stream is where its frames go (through the node's streams), the last
	// with End.
	Stream StreamID
	// ParamHeaders are the Mcp-Param-{name} headers of an HTTP request,
	// by name in lower case, as sent (the server checks them against the tool).
	ParamHeaders map[string]string
}

// RequestMeta is what the runtime reads of a modern request's params, in
// one pass: its _meta (version, client, capabilities, log level, progress
// token), what it names, its arguments, and a retry's fields.
type RequestMeta struct {
	// ProtocolVersion is the revision of this request (required).
	ProtocolVersion string
	// ClientInfo is the client's self-description (optional).
	ClientInfo Implementation
	// Capabilities are what the client declares for this request
	// (required; an empty object declares none).
	Capabilities ClientCapabilities
	// LogLevel is the lowest level of notifications/message the client
	// wants for this request; "" wants none.
	LogLevel LoggingLevel
	// ProgressToken asks for notifications/progress (HasToken).
	ProgressToken ID
	HasToken      bool

	// What the request names (params.name of tools/call and prompts/get,
	// params.uri of resources/read) and its arguments, read in the same
	// pass: the HTTP headers and the tools' mirrored parameters are
	// checked against them.
	Name, URI string
	Arguments jsontext.Value
	// Meta is params._meta as sent, every key (a tool's handler gets it,
	// as in a session's request).
	Meta Meta
	// A retry's fields (Multi Round-Trip Requests).
	Retry RetryParams
}

// metaWire is the wire form of the keys RequestMeta reads. _meta is read
// whole (RequestMeta.Meta), then its keys of the protocol from it.
type metaWire struct {
	Name           string                    `json:"name"`
	URI            string                    `json:"uri"`
	Arguments      jsontext.Value            `json:"arguments"`
	RequestState   string                    `json:"requestState"`
	InputResponses map[string]jsontext.Value `json:"inputResponses"`
	Meta           Meta                      `json:"_meta"`
}

// metaKey decodes the value of key in m into v, if m has it (null counts
// as absent); present reports whether it had.
func metaKey(m Meta, key string, v any) (present bool, err error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// ModernVersionOf returns the protocol version params._meta names, and
// whether it names one (the request is then of the modern era, whatever
// the version). It decodes only what it needs.
func ModernVersionOf(params jsontext.Value) (string, bool) {
	if !strings.Contains(string(params), MetaKeyProtocolVersion) {
		return "", false
	}
	var w metaWire
	if json.Unmarshal(params, &w) != nil {
		return "", false
	}
	var v string
	if ok, err := metaKey(w.Meta, MetaKeyProtocolVersion, &v); !ok || err != nil {
		return "", false
	}
	return v, true
}

// ParseRequestMeta reads a modern request's _meta. A missing required
// field or a malformed one is an invalid-params error that names it.
func ParseRequestMeta(params jsontext.Value) (*RequestMeta, *Error) {
	var w metaWire
	if len(params) > 0 {
		if err := json.Unmarshal(params, &w); err != nil {
			return nil, Errorf(CodeInvalidParams, "invalid params: %s", DecodeErrorText(err))
		}
	}
	if w.Meta == nil {
		return nil, Errorf(CodeInvalidParams, "invalid params: params._meta is required (with %q and %q)", MetaKeyProtocolVersion, MetaKeyClientCapabilities)
	}
	rm := &RequestMeta{Name: w.Name, URI: w.URI, Arguments: w.Arguments, Meta: w.Meta,
		Retry: RetryParams{RequestState: w.RequestState, InputResponses: w.InputResponses}}
	invalid := func(key string, err error) *Error {
		where := fmt.Sprintf("params._meta[%q]", key)
		field, kind, _ := semanticFault(err)
		if field != "" {
			where += "." + field
		}
		if kind != "" {
			return Errorf(CodeInvalidParams, "invalid params: %s must not be %s", where, kind)
		}
		return Errorf(CodeInvalidParams, "invalid params: %s is not valid", where)
	}
	switch ok, err := metaKey(w.Meta, MetaKeyProtocolVersion, &rm.ProtocolVersion); {
	case err != nil:
		return nil, invalid(MetaKeyProtocolVersion, err)
	case !ok || rm.ProtocolVersion == "":
		return nil, Errorf(CodeInvalidParams, "invalid params: params._meta[%q] is required", MetaKeyProtocolVersion)
	}
	switch ok, err := metaKey(w.Meta, MetaKeyClientCapabilities, &rm.Capabilities); {
	case err != nil:
		return nil, invalid(MetaKeyClientCapabilities, err)
	case !ok:
		return nil, Errorf(CodeInvalidParams, "invalid params: params._meta[%q] is required", MetaKeyClientCapabilities)
	}
	if _, err := metaKey(w.Meta, MetaKeyClientInfo, &rm.ClientInfo); err != nil {
		return nil, invalid(MetaKeyClientInfo, err)
	}
	if ok, err := metaKey(w.Meta, MetaKeyLogLevel, &rm.LogLevel); err != nil {
		return nil, invalid(MetaKeyLogLevel, err)
	} else if ok && !rm.LogLevel.Valid() {
		return nil, Errorf(CodeInvalidParams, "invalid params: params._meta[%q]: unknown level %q", MetaKeyLogLevel, rm.LogLevel)
	}
	if t, ok := w.Meta.ProgressToken(); ok {
		rm.ProgressToken, rm.HasToken = t, true
	}
	return rm, nil
}

// UnsupportedVersionError is the error for a request of a revision we do
// not speak.
func UnsupportedVersionError(requested string) *Error {
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{AllVersions, requested})
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
}

// MissingCapabilityError is the error for a request whose serving needs
// capabilities the client did not declare: required is a
// ClientCapabilities object naming them.
func MissingCapabilityError(required *ClientCapabilities, what string) *Error {
	data, _ := json.Marshal(struct {
		RequiredCapabilities *ClientCapabilities `json:"requiredCapabilities"`
	}{required})
	return &Error{Code: CodeMissingClientCapability, Message: "Missing required client capability: " + what, Data: data}
}

// HeaderMismatchError is the error for HTTP headers that do not mirror
// the body.
func HeaderMismatchError(format string, args ...any) *Error {
	return Errorf(CodeHeaderMismatch, "Header mismatch: "+format, args...)
}

// InputRequest is one request of an input_required result: what the
// server asks the client (elicitation/create, sampling/createMessage,
// roots/list).
type InputRequest struct {
	Method string         `json:"method"`
	Params jsontext.Value `json:"params,omitzero"`
}

// InputRequiredResult is the interim result of a request that needs the
// client's input: the client answers InputRequests and sends the request
// again with inputResponses and RequestState.
type InputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                  `json:"requestState,omitempty"`
	Meta          Meta                    `json:"_meta,omitempty"`
}

// RetryParams are the fields a retried modern request adds to its params.
type RetryParams struct {
	RequestState   string                    `json:"requestState,omitempty"`
	InputResponses map[string]jsontext.Value `json:"inputResponses,omitempty"`
}

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	ResultType        string             `json:"resultType"`
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	TTLMs             int64              `json:"ttlMs"`
	CacheScope        string             `json:"cacheScope"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// Cache scopes of a cacheable result.
const (
	CachePublic  = "public"
	CachePrivate = "private"
)
