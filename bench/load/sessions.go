package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect opens one session: initialize + initialized, and then, unless
// -no-standalone-sse, the SDK opens the standalone GET stream.
func (l *loader) connect(ctx context.Context, c *mcp.Client, hc *http.Client) (*mcp.ClientSession, error) {
	t := &mcp.StreamableClientTransport{
		Endpoint:             l.cfg.endpoints[0],
		HTTPClient:           hc,
		MaxRetries:           -1,
		DisableStandaloneSSE: l.cfg.noSSE,
	}
	cctx, cancel := context.WithTimeout(ctx, l.cfg.callTimeout)
	defer cancel()
	return c.Connect(cctx, t, l.sessionOptions())
}

// sessionOptions pin the protocol version unless -proto is "latest".
func (l *loader) sessionOptions() *mcp.ClientSessionOptions {
	if l.cfg.proto == "" || l.cfg.proto == "latest" {
		return nil
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: l.cfg.proto}
}

// openSessions opens n sessions with at most -conc handshakes at a time.
// A session that failed to open is nil in the result.
func (l *loader) openSessions(ctx context.Context, c *mcp.Client, hc *http.Client, n int) (css []*mcp.ClientSession, failed int) {
	css = make([]*mcp.ClientSession, n)
	var nfailed atomic.Int64
	sem := make(chan struct{}, max(1, l.cfg.conc))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cs, err := l.connect(ctx, c, hc)
			if err != nil {
				nfailed.Add(1)
				l.errs.add(fmt.Errorf("connect: %w", err))
				return
			}
			css[i] = cs
		})
	}
	wg.Wait()
	return css, int(nfailed.Load())
}

// closeAll closes every open session (DELETE), -conc at a time.
func (l *loader) closeAll(css []*mcp.ClientSession) {
	sem := make(chan struct{}, max(1, l.cfg.conc))
	var wg sync.WaitGroup
	for _, cs := range css {
		if cs == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_ = cs.Close()
		})
	}
	wg.Wait()
}

// negotiated is the protocol version of the first open session, or "none".
func negotiated(css []*mcp.ClientSession) string {
	for _, cs := range css {
		if cs == nil {
			continue
		}
		if r := cs.InitializeResult(); r != nil {
			return r.ProtocolVersion
		}
	}
	return "none"
}

// multiRoundTrip reports whether cs negotiated 2026-07-28 or later, where
// server requests are answered without the receiving middleware.
func multiRoundTrip(cs *mcp.ClientSession) bool {
	r := cs.InitializeResult()
	return r != nil && r.ProtocolVersion >= "2026-07-28"
}
