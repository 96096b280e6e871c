package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
)

// lameDuck returns the context the server serves under: it ends d after
// ctx does (at once when d is 0), and meanwhile the server reports not
// ready while it goes on serving everything (Server.LameDuck). A second
// SIGINT or SIGTERM ends the wait early. Call stop when the server is done
// to release what lameDuck holds.
func lameDuck(ctx context.Context, d time.Duration, srv *mcpactors.Server, log *slog.Logger) (serve context.Context, stop func()) {
	if d <= 0 {
		return ctx, func() {}
	}
	serve, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() { // owned by stop, which waits for it
		defer close(ended)
		defer cancel()
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		srv.LameDuck()
		log.Info("stopping: still answering while /readyz says 503, then draining", "lame_duck", d)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-again:
			log.Info("stopping: a second signal ends the lame duck")
		case <-done:
		}
	}()
	return serve, func() {
		close(done)
		<-ended
	}
}

// adminListener serves the operators' paths on their own port
// (--admin-listen): /metrics, the probes, and /admin/ and /debug/ when
// they are on.
type adminListener struct {
	hs     *http.Server
	served chan struct{}
	log    *slog.Logger
}

// startAdminListener starts serving on ln; ops may be nil.
func startAdminListener(ln net.Listener, srv *mcpactors.Server, ops http.Handler, log *slog.Logger) *adminListener {
	mux := http.NewServeMux()
	srv.HandleHealth(mux)
	if m := srv.MetricsHandler(); m != nil {
		mux.Handle("GET /metrics", m)
	}
	if ops != nil {
		mux.Handle("/", ops)
	}
	a := &adminListener{hs: mcpactors.NewHTTPServer(mux, log), served: make(chan struct{}), log: log}
	go func() { // owned by stop
		defer close(a.served)
		if err := a.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the admin listener stopped", "err", err)
		}
	}()
	return a
}

// stop closes the admin listener, letting requests in flight finish for
// up to 2 s.
func (a *adminListener) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := a.hs.Shutdown(ctx); err != nil {
		_ = a.hs.Close()
	}
	<-a.served
}
