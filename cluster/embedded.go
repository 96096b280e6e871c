package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startServer starts the embedded NATS server.
func (n *Node) startServer() error {
	o := n.opts
	so := &server.Options{
		ServerName:         o.NodeID,
		JetStream:          true,
		StoreDir:           o.DataDir,
		NoSigs:             true,
		DontListen:         true,
		JetStreamMaxMemory: 256 << 20,
	}
	if o.ClusterListen != "" {
		// A server with a route port waits for a client port before it
		// reports ready: give it one, on loopback.
		so.DontListen = false
		so.Host, so.Port = "127.0.0.1", server.RANDOM_PORT
		host, port, _ := net.SplitHostPort(o.ClusterListen)
		p, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("%w: cluster listen port %q", ErrInvalidOptions, port)
		}
		if p == 0 {
			p = server.RANDOM_PORT
		}
		so.Cluster = server.ClusterOpts{Name: o.ClusterName, Host: host, Port: p}
		if o.Secret != "" {
			so.Cluster.Username, so.Cluster.Password = routeUser, o.Secret
		}
		for _, r := range o.Routes {
			u, _ := url.Parse(r)
			if o.Secret != "" {
				u.User = url.UserPassword(routeUser, o.Secret)
			}
			so.Routes = append(so.Routes, u)
		}
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return fmt.Errorf("cluster: embedded NATS server: %w", err)
	}
	ns.SetLoggerV2(natsLogger{n.log}, false, false, false)
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return errors.New("cluster: the embedded NATS server did not start within 10s")
	}
	n.ns = ns
	return nil
}

// routeUser is the user name of authenticated routes.
const routeUser = "mcp-actors"

// natsLogger writes the embedded server's log to slog: notices at debug
// (it is chatty), warnings and errors as such.
type natsLogger struct{ log *slog.Logger }

func (l natsLogger) Noticef(f string, v ...any) { l.log.Debug("nats: " + fmt.Sprintf(f, v...)) }
func (l natsLogger) Warnf(f string, v ...any)   { l.log.Warn("nats: " + fmt.Sprintf(f, v...)) }
func (l natsLogger) Fatalf(f string, v ...any)  { l.log.Error("nats: " + fmt.Sprintf(f, v...)) }
func (l natsLogger) Errorf(f string, v ...any)  { l.log.Error("nats: " + fmt.Sprintf(f, v...)) }
func (l natsLogger) Debugf(f string, v ...any)  { l.log.Debug("nats: " + fmt.Sprintf(f, v...)) }
func (l natsLogger) Tracef(f string, v ...any)  {}
