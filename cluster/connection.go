package cluster

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// connect connects to the embedded server in-process, or to URLs.
func (n *Node) connect(ctx context.Context) error {
	opts := []nats.Option{
		nats.Name("mcp-actors/" + n.opts.NodeID),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				n.log.Warn("NATS connection lost", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { n.log.Info("NATS connection back", "url", c.ConnectedUrlRedacted()) }),
		// A subscription that falls behind drops messages (a slow
		// consumer): routed messages and frames are lost, and the
		// requests they carried end by the acknowledgement's bound.
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			n.natsErrors.Add(1)
			n.warnNATS.Do(func() {
				subject := ""
				if sub != nil {
					subject = sub.Subject
				}
				n.log.Warn("NATS error (counted in mcp_cluster_nats_errors_total; logged at most once a second)", "subject", subject, "err", err)
			})
		}),
	}
	var url string
	if n.ns != nil {
		opts = append(opts, nats.InProcessServer(n.ns))
	} else {
		url = strings.Join(n.opts.URLs, ",")
		if n.opts.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(n.opts.CredsFile))
		}
		if n.opts.CAFile != "" {
			opts = append(opts, nats.RootCAs(n.opts.CAFile))
		}
		opts = append(opts, nats.RetryOnFailedConnect(false))
	}
	if n.ns != nil {
		nc, err := nats.Connect(url, opts...)
		if err != nil {
			return fmt.Errorf("cluster: connecting to the embedded NATS server: %w", err)
		}
		n.nc = nc
		return ctx.Err()
	}
	nc, err := n.dial(ctx, url, opts)
	if err != nil {
		return err
	}
	n.nc = nc
	return nil
}

// dial connects to the NATS servers of URLs, trying again with backoff
// (a deployment that starts beside the node, a server restarting) for
// ConnectTimeout at most. Each failed try is logged at warn, naming the
// servers (credentials left out); the error names them too.
func (n *Node) dial(ctx context.Context, url string, opts []nats.Option) (*nats.Conn, error) {
	named := RedactURLs(n.opts.URLs)
	ctx, cancel := context.WithTimeout(ctx, n.opts.ConnectTimeout)
	defer cancel()
	wait := 250 * time.Millisecond
	for try := 1; ; try++ {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			if try > 1 {
				n.log.Info("connected to NATS", "url", nc.ConnectedUrlRedacted(), "tries", try)
			}
			return nc, nil
		}
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) {
			return nil, fmt.Errorf("cluster: connecting to NATS at %s: %w", named, err) // trying again would not help
		}
		n.log.Warn("NATS not reachable yet; trying again", "url", named, "try", try, "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cluster: connecting to NATS at %s: gave up after %d tries in %s (--nats-connect-timeout): %w",
				named, try, n.opts.ConnectTimeout, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// RedactURLs returns urls joined by commas, each without its user
// information (a user and password, or a token): for logs.
func RedactURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, s := range urls {
		u, err := neturl.Parse(s)
		if err != nil {
			out[i] = "(a URL that does not parse)"
			continue
		}
		if u.User != nil {
			u.User = neturl.User("REDACTED")
		}
		out[i] = u.String()
	}
	return strings.Join(out, ",")
}
