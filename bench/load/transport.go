package main

import (
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// newHTTPClient returns the HTTP client every session shares: one
// keep-alive pool with idlePerHost idle connections per host. With more
// than one endpoint, each request goes to the next endpoint in turn. With
// -h2c (h2c set) it speaks HTTP/2 without TLS: every request and GET stream
// is a stream of a few connections, so that more sessions hold their GET
// stream than a machine has ports for connections.
func newHTTPClient(endpoints []string, idlePerHost int) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0, // no global limit
		MaxIdleConnsPerHost: idlePerHost,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	if h2c {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	if len(endpoints) < 2 {
		return &http.Client{Transport: tr}
	}
	rr := &roundRobin{base: tr}
	for _, e := range endpoints {
		u, _ := url.Parse(e) // checked in parseConfig
		rr.targets = append(rr.targets, u)
	}
	return &http.Client{Transport: rr}
}

// roundRobin sends each HTTP request (POST, GET and DELETE alike) to the
// next of several endpoints, so that one session's requests are spread over
// every node of a cluster. The request's scheme, host and path are replaced
// by the endpoint's.
type roundRobin struct {
	base    http.RoundTripper
	targets []*url.URL
	next    atomic.Uint64
}

// RoundTrip implements http.RoundTripper.
func (t *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	u := t.targets[(t.next.Add(1)-1)%uint64(len(t.targets))]
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.URL.Path, r.URL.RawPath = u.Scheme, u.Host, u.Path, u.RawPath
	r.Host = ""
	return t.base.RoundTrip(r)
}

// h2c is -h2c: set once, before any client is made.
var h2c bool
