package transport

import (
	"log/slog"
	"net/http"
	"time"
)

// NewHTTPServer returns an http.Server for handler with the timeouts an MCP
// endpoint needs: request headers must arrive within 10 s (a slow-loris
// client is cut off), idle keep-alive connections close after 2 minutes,
// and headers are bounded to 64 KiB. There is no overall write timeout, so
// SSE streams may live long; HTTPHandler bounds each write and each POST
// body read itself. log may be nil.
func NewHTTPServer(handler http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// shuttingDown returns a channel closed once the http.Server serving r
// begins to shut down (http.Server.RegisterOnShutdown), which is how a
// GET stream, that would otherwise wait for its session, learns to end:
// http.Server.Shutdown waits for every response to finish. The hook is
// registered once per server, by the first GET stream it serves, and the
// handler keeps the server's channel from then on (a server, once shut
// down, serves no more). Nil, which never fires, for a request no
// http.Server serves (a handler called directly, as by a test).
func (h *HTTPHandler) shuttingDown(r *http.Request) <-chan struct{} {
	hs, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if hs == nil {
		return nil
	}
	if ch, ok := h.shutdowns.Load(hs); ok {
		return ch.(chan struct{})
	}
	ch := make(chan struct{})
	if prev, loaded := h.shutdowns.LoadOrStore(hs, ch); loaded {
		return prev.(chan struct{})
	}
	hs.RegisterOnShutdown(func() { close(ch) })
	return ch
}
