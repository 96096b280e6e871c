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
