package cluster

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-actors/mcp-actors/internal/certfile"
)

// routeCertificate makes tc, the routes' mutual TLS configuration, serve
// and present the route certificate from its files, read again when they
// change (cert-manager renewing it in place): each new route connection,
// dialled or accepted, gets the certificate on disk then; connections up
// keep theirs. The CAs (Options.ClusterCA) are read at start only: a new
// CA goes into the bundle beside the old one, and a restart takes it.
func routeCertificate(o Options, tc *tls.Config, log *slog.Logger) (*certfile.Reloader, error) {
	certs, err := certfile.New(o.ClusterTLSCert, o.ClusterTLSKey, func(err error) {
		log.Warn("the route certificate changed but does not load: the one in use stays", "err", err)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: route TLS: %w", ErrInvalidOptions, err)
	}
	tc.Certificates = nil
	tc.GetCertificate = certs.GetCertificate
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return certs.GetCertificate(nil)
	}
	return certs, nil
}

// RouteCertificateExpiry returns when the route certificate on disk
// expires (read again when its files changed); zero without route TLS.
func (n *Node) RouteCertificateExpiry() time.Time {
	if n.routeCert == nil {
		return time.Time{}
	}
	if _, err := n.routeCert.GetCertificate(nil); err != nil {
		return time.Time{}
	}
	return n.routeCert.NotAfter()
}
