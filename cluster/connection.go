package cluster

import (
	"context"
	"fmt"
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
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return fmt.Errorf("cluster: connecting to NATS: %w", err)
	}
	n.nc = nc
	return ctx.Err()
}
