package cluster

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The route secret from a file (Options.SecretFile) is read again when the
// file changes, so that an operator rotates it without a restart (a
// Kubernetes Secret mounted as a file changes in place). The file holds
// one secret per line: the first is the one this node presents when it
// dials a route; every line is one it accepts. A rotation takes three
// edits, each reaching every node before the next (docs/operations.md):
//
//	old          every node presents and accepts old
//	old\nnew     accepts new as well
//	new\nold     presents new (its routes dial again), still accepts old
//	new          accepts new alone
//
// A node checks a route's secret itself (routeSecrets.Check, the embedded
// server's router authentication), against the lines it read last. When
// the first line changes, the server's options are reloaded with it: the
// routes this node dials are dialled again with the new secret (once: a
// moment without them), and the routes others dial are kept. A change that
// does not read (an empty file) is reported and the last good lines stay.

// secretCheckEvery is how often the secret file is looked at.
const secretCheckEvery = time.Second

// routeSecrets is the route secrets of a node whose secret comes from a
// file: what it presents, what it accepts.
type routeSecrets struct {
	file   string
	accept atomic.Pointer[[]string] // every secret a route may present
	stamp  fileStamp                // the file as last read (the watcher's)
	failed fileStamp                // a change that did not read: reported once

	mu       sync.Mutex
	watchers []func() // OnRouteSecrets
}

// notify calls the watchers of a change.
func (s *routeSecrets) notify() {
	s.mu.Lock()
	fns := slices.Clone(s.watchers)
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// OnRouteSecrets has fn called, on the watcher's goroutine, each time the
// route secrets change (Options.SecretFile read again): StateKeys may
// have changed. Without a secret file nothing changes, and fn is never
// called.
func (n *Node) OnRouteSecrets(fn func()) {
	if n.secrets == nil {
		return
	}
	n.secrets.mu.Lock()
	n.secrets.watchers = append(n.secrets.watchers, fn)
	n.secrets.mu.Unlock()
}

// fileStamp tells a file's versions apart.
type fileStamp struct {
	mod  time.Time
	size int64
}

// stampOf is the stamp of the file fi describes.
func stampOf(fi os.FileInfo) fileStamp { return fileStamp{mod: fi.ModTime(), size: fi.Size()} }

// readSecrets reads a secret file: its non-empty lines (a trailing \r
// dropped), the first the one to present.
func readSecrets(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var lines []string
	for line := range bytes.Lines(b) {
		if s := strings.TrimRight(string(line), "\r\n"); s != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("the route secret file %s has no secret", file)
	}
	return lines, nil
}

// newRouteSecrets reads file and returns its secrets.
func newRouteSecrets(file string) (*routeSecrets, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	lines, err := readSecrets(file)
	if err != nil {
		return nil, err
	}
	s := &routeSecrets{file: file, stamp: stampOf(fi)}
	s.accept.Store(&lines)
	return s, nil
}

// present is the secret this node presents.
func (s *routeSecrets) present() string { return (*s.accept.Load())[0] }

// all is every secret the node knows (for the log's redaction).
func (s *routeSecrets) all() []string { return *s.accept.Load() }

// Check implements server.Authentication for routes: the route presents
// routeUser and one of the secrets accepted now.
func (s *routeSecrets) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o == nil || o.Username != routeUser {
		return false
	}
	ok := false
	for _, secret := range *s.accept.Load() {
		// Every line compared, in constant time: how many match says nothing.
		if subtle.ConstantTimeCompare([]byte(secret), []byte(o.Password)) == 1 {
			ok = true
		}
	}
	return ok
}

// changed reads the file again when it changed since it was last read and
// returns its secrets (nil when it did not change, or changed to
// something that does not read: then err says why, once per change).
func (s *routeSecrets) changed() ([]string, error) {
	fi, err := os.Stat(s.file)
	if err != nil {
		return nil, s.fail(fileStamp{}, err)
	}
	st := stampOf(fi)
	if st == s.stamp || st == s.failed {
		return nil, nil
	}
	lines, err := readSecrets(s.file)
	if err != nil {
		return nil, s.fail(st, err)
	}
	s.stamp, s.failed = st, fileStamp{}
	return lines, nil
}

// fail records a change that did not read; it returns err the first time.
func (s *routeSecrets) fail(st fileStamp, err error) error {
	if st == s.failed && !st.mod.IsZero() {
		return nil
	}
	s.failed = st
	return err
}

// watchSecrets reads the secret file again every secretCheckEvery until
// the node stops, and puts a change to use: the secrets accepted at once,
// the one presented by a reload of the embedded server's routes.
func (n *Node) watchSecrets() {
	defer n.stopped.Done()
	t := time.NewTicker(secretCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		lines, err := n.secrets.changed()
		if err != nil {
			n.log.Warn("the route secret file changed but cannot be read: the secrets in use stay", "file", n.secrets.file, "err", err)
		}
		if lines == nil {
			continue
		}
		before := n.secrets.present()
		n.natsLog.redact(append(lines, n.secrets.all()...)) // the old ones may still show in a late line
		n.secrets.accept.Store(&lines)
		n.secrets.notify()
		if lines[0] == before {
			n.log.Info("route secrets reloaded: the secret presented is the same", "accepted", len(lines))
			continue
		}
		if err := n.presentSecret(lines[0]); err != nil {
			n.log.Error("route secrets reloaded, but the routes could not take the new secret: they present the old one until a restart", "err", err)
			continue
		}
		n.log.Info("route secrets reloaded: the routes this node dials present the new secret", "accepted", len(lines))
	}
}

// presentSecret reloads the embedded server's options with secret as the
// one its routes present: the routes it dials (explicit ones, by new URLs,
// and those it learns of).
func (n *Node) presentSecret(secret string) error {
	if n.ns == nil || n.so == nil {
		return errors.New("no embedded server")
	}
	next := n.so.Clone()
	next.Cluster.Password = secret
	next.Routes = routeURLs(n.opts.Routes, secret)
	if err := n.ns.ReloadOptions(next); err != nil {
		return err
	}
	n.so = next
	return nil
}

// routeURLs parses routes (checked by Options), each with secret as its
// password when there is one.
func routeURLs(routes []string, secret string) []*url.URL {
	var out []*url.URL
	for _, r := range routes {
		u, _ := url.Parse(r)
		if secret != "" {
			u.User = url.UserPassword(routeUser, secret)
		}
		out = append(out, u)
	}
	return out
}
