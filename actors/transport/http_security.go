package transport

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// originPolicy decides which Host and Origin headers a server accepts, to
// defeat DNS rebinding: a web page on evil.example whose name resolves to
// 127.0.0.1 makes the browser send Host: evil.example and Origin:
// http://evil.example.
type originPolicy struct {
	loopback bool     // listening on loopback only
	hosts    []string // allow-list of Host values (lower case); nil: default
	origins  []string // allow-list of Origin values (lower case); nil: default

	// allowed remembers Host values found allowed (the few a deployment
	// sees), so that most requests skip parsing; at most maxAllowedCache.
	allowed      *sync.Map
	allowedCount *atomic.Int32
}

const maxAllowedCache = 64

func newOriginPolicy(o *HTTPOptions) originPolicy {
	// No listen address is treated as loopback: the checks stay on until
	// the embedder says where the server is reached.
	loopback := o.ListenAddr == "" || isLoopbackAddr(o.ListenAddr)
	p := originPolicy{loopback: loopback, allowed: &sync.Map{}, allowedCount: &atomic.Int32{}}
	for _, h := range o.AllowedHosts {
		p.hosts = append(p.hosts, strings.ToLower(strings.TrimSpace(h)))
	}
	for _, h := range o.AllowedOrigins {
		p.origins = append(p.origins, strings.TrimRight(strings.ToLower(strings.TrimSpace(h)), "/"))
	}
	return p
}

// hostAllowed checks the Host header.
func (p originPolicy) hostAllowed(host string) bool {
	if _, ok := p.allowed.Load(host); ok {
		return true
	}
	if !p.checkHost(host) {
		return false
	}
	if p.allowedCount.Add(1) <= maxAllowedCache {
		p.allowed.Store(host, struct{}{})
	}
	return true
}

func (p originPolicy) checkHost(host string) bool {
	host = strings.ToLower(host)
	if p.hosts != nil {
		if slices.Contains(p.hosts, "*") || slices.Contains(p.hosts, host) {
			return true
		}
		name, _ := splitHost(host)
		return slices.Contains(p.hosts, name)
	}
	if !p.loopback {
		return true
	}
	name, _ := splitHost(host)
	return isLoopbackHost(name)
}

// originAllowed checks the Origin header (absent is allowed: non-browser
// clients send none).
func (p originPolicy) originAllowed(origin, host string) bool {
	if origin == "" {
		return true
	}
	origin = strings.TrimRight(strings.ToLower(origin), "/")
	if p.origins != nil {
		return slices.Contains(p.origins, "*") || slices.Contains(p.origins, origin)
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if p.loopback {
		return isLoopbackHost(u.Hostname())
	}
	return strings.EqualFold(u.Host, host) // same origin as the request
}

// splitHost splits "name:port" (or "[v6]:port"), tolerating no port.
func splitHost(hostport string) (string, string) {
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		return h, port
	}
	return strings.Trim(hostport, "[]"), ""
}
