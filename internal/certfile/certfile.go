// Package certfile serves a TLS certificate from its PEM files and reads
// them again when they change (cert-manager, or an operator, renewing
// them in place): a handshake after the change gets the new certificate,
// without a restart. A change that does not load (a key that does not
// match, a file half written) keeps the last good pair, and is reported.
package certfile

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// checkEvery is how often, at most, a handshake looks at the files.
const checkEvery = time.Second

// Reloader holds a certificate and its key from two files.
type Reloader struct {
	certFile, keyFile string
	onError           func(error)   // told of a change that did not load
	every             time.Duration // checkEvery; tests set less

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]time.Time // the files' modification times when cert was loaded
	checked time.Time    // when the files were last looked at
	failed  [2]time.Time // the stamp that last failed to load: reported once
}

// New loads the pair at once (an error if it does not load) and returns a
// reloader; onError, if not nil, is told of a later change that does not
// load.
func New(certFile, keyFile string, onError func(error)) (*Reloader, error) {
	r := &Reloader{certFile: certFile, keyFile: keyFile, onError: onError, every: checkEvery}
	stamp, err := r.stamps()
	if err != nil {
		return nil, err
	}
	if err := r.load(stamp); err != nil {
		return nil, err
	}
	r.checked = time.Now()
	return r, nil
}

// GetCertificate is a tls.Config's GetCertificate: the current pair, read
// again first when a file changed since.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.checked) >= r.every {
		r.checked = now
		if stamp, err := r.stamps(); err == nil && stamp != r.stamp && stamp != r.failed {
			if err := r.load(stamp); err != nil {
				r.failed = stamp
				if r.onError != nil {
					r.onError(err)
				}
			}
		}
	}
	return r.cert, nil
}

// NotAfter returns when the current certificate expires.
func (r *Reloader) NotAfter() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert.Leaf.NotAfter
}

// stamps returns the files' modification times.
func (r *Reloader) stamps() ([2]time.Time, error) {
	var out [2]time.Time
	for i, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return out, err
		}
		out[i] = fi.ModTime()
	}
	return out, nil
}

// load reads the pair; on success it becomes the current one.
func (r *Reloader) load(stamp [2]time.Time) error {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("loading the TLS certificate %s: %w", r.certFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return fmt.Errorf("parsing the TLS certificate %s: %w", r.certFile, err)
		}
	}
	r.cert, r.stamp = &cert, stamp
	return nil
}
