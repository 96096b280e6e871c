package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Options configure a node. The zero value is a single node with an
// embedded NATS server (no client port, no routes) and its JetStream store
// under the user's state directory. The embedded server admits no client
// but the node itself, and its routes authenticate (embedded.go).
type Options struct {
	// NodeID names the node in its cluster: letters, digits, '-' and '_'.
	// Default: a random one (a node that restarts should keep its ID).
	NodeID string
	// ClusterName names the cluster; every subject and JetStream bucket the
	// cluster uses is named under it, so that two clusters can share one
	// NATS deployment. Letters, digits, '-' and '_' (default "mcp").
	ClusterName string
	// DataDir is where the embedded server keeps its JetStream store: the
	// cluster's replicated state, to be backed up, never in a directory
	// the system may clean. Required with ClusterListen; alone, it
	// defaults to <state dir>/mcp-actors/<cluster>/<node>, where the
	// state dir is $XDG_STATE_HOME, else ~/.local/state.
	DataDir string

	// ClusterListen is the embedded server's route address (host:port);
	// empty for a node on its own.
	ClusterListen string
	// ClusterAdvertise, when set, is the route address (host:port) this
	// node tells the others to dial instead of ClusterListen: an address
	// in front of it (NAT, a proxy). Requires ClusterListen.
	ClusterAdvertise string
	// Routes are the other nodes' route URLs (nats-route://host:port); the
	// list may name this node too.
	Routes []string
	// Secret, when set, is required of every route: a node without it
	// cannot join. A node with a route address authenticates its routes
	// with a secret, mutual TLS, or both: one with neither is refused.
	// The secret never appears in the node's log.
	Secret string
	// SecretFile, instead of Secret, is a file of route secrets, one per
	// line: the first is the one this node presents, every line one it
	// accepts. It is read at start and again when it changes (looked at
	// every second), so that the secret is rotated without a restart
	// (routesecret.go).
	SecretFile string
	// ClusterTLSCert and ClusterTLSKey are PEM files of this node's route
	// certificate and its key; ClusterCA is the PEM file of the CAs that
	// sign every node's route certificate. With the three, routes use
	// mutual TLS: each side verifies the other's certificate (which names
	// the host or IP address the other dials).
	ClusterTLSCert, ClusterTLSKey, ClusterCA string

	// SyncAlways makes the embedded server's JetStream write every change
	// to disk (fsync) before it acknowledges it. Without it, JetStream
	// acknowledges first and writes to disk every SyncInterval (default:
	// NATS's, 2 min): a process crash loses nothing acknowledged, a power
	// failure may (docs/cluster.md, "Durability"). Neither applies to URLs,
	// whose servers their operator configures.
	SyncAlways   bool
	SyncInterval time.Duration

	// URLs, when set, connect to an existing NATS deployment (with
	// JetStream) instead of starting an embedded server. A user and
	// password or a token may be given in the URL.
	URLs []string
	// CredsFile is a NATS credentials file (JWT and NKey) for URLs.
	CredsFile string
	// CAFile is a PEM file of the CAs that sign the NATS servers'
	// certificates (TLS to URLs).
	CAFile string
	// ConnectTimeout is how long Start keeps trying URLs, with backoff,
	// before it gives up (default 30 s).
	ConnectTimeout time.Duration

	// Replicas is how many copies JetStream keeps of the cluster's buckets
	// and streams (default: 1 for a node on its own, 3 otherwise, at most
	// the number of servers the routes name).
	Replicas int
	// LeaseTTL is how long a node's lease lasts without renewal; a node
	// renews it every LeaseTTL/4 (default DefaultLeaseTTL). Sessions of a
	// node whose lease lapsed may be taken over, and a node that could not
	// renew its lease for that long gives its sessions up: keep it well
	// above the time JetStream takes to elect a new leader for the lease
	// bucket after a node loss (4 to 9 s).
	LeaseTTL time.Duration

	// EventMaxAge bounds how long a session's event log (the SSE events a
	// client may resume with Last-Event-ID on any node) is kept in
	// JetStream (default 15 min); EventsPerSession bounds how many events
	// of one session it keeps (default 512, the sessions' own bound);
	// EventBytes bounds the whole log (default 256 MiB); the oldest go
	// first. EventFiles keeps the log in files rather than in memory:
	// each event then costs more CPU (about a quarter more per appended
	// event on three replicas here) but survives the loss of every
	// replica at once; in memory, each replica keeps it, so it survives
	// the loss of a node (default: memory; `serve` keeps it in files by
	// default, since a replicated stream in memory can be left without a
	// leader after two of its replicas restart, and then no session can be
	// taken over or started again: TestNodeLostForGood).
	EventMaxAge      time.Duration
	EventsPerSession int
	EventBytes       int64
	EventFiles       bool

	// SessionBytes bounds the session directory (sessions, their owners
	// and State; default 1 GiB) and JournalBytes the journals of protocol
	// 2026-07-28 requests (default 1 GiB): a store that reaches its bound
	// refuses what would grow it (a new session gets 503 "the session
	// directory is full"), never drops what it holds. A store made
	// earlier takes the bound when a creating node starts with it.
	SessionBytes int64
	JournalBytes int64

	// EventDelay is how long the event log's writer lets a session's
	// events gather (those of every session of the node) before it writes
	// them as one batch: each batch costs a replication round on every
	// replica, so a node writes at most one per EventDelay, however busy
	// (256 events fill a batch sooner). A node that crashes loses at most
	// the events of its last EventDelay, besides those in flight; a client
	// on a live node loses none (the owner replays from memory). Zero
	// means DefaultEventDelay; a negative delay writes each batch at once.
	EventDelay time.Duration

	// MaxMessageBytes bounds a message one node sends another: a client's
	// request or answer to a server-to-client request, a frame of a
	// result (default DefaultMaxMessageBytes). A message larger than the
	// NATS server's max payload (1 MiB unless its operator set another)
	// crosses in chunks; one larger than MaxMessageBytes does not cross
	// (a request gets 413, a response a JSON-RPC error). It also bounds
	// what a node holds of messages being put together: four times it.
	// Keep it above the HTTP endpoint's largest body.
	MaxMessageBytes int

	// Clock is what the node measures its lease by (nil: the system's
	// clocks). Tests give a fault clock, to step, skew or suspend a node's
	// time.
	Clock Clock

	// Logger receives the node's log (every line names the node); nil
	// means slog.Default().
	Logger *slog.Logger
}

// DefaultLeaseTTL is the lease TTL of a node by default: a crashed node's
// sessions are taken over within it (a node that shuts down hands them
// over at once), and it outlasts a JetStream leader election (4 to 9 s),
// during which no node can renew its lease.
const DefaultLeaseTTL = 15 * time.Second

// DefaultEventDelay is Options.EventDelay by default. Nothing waits for
// the event log (the owner replays from memory while it lives), so the
// delay costs no latency; what a batch costs follows its replication
// round, not its events: on a three-node cluster under load, 250 ms
// against 20 ms cuts the cluster's CPU per elicitation round trip by
// about a third (bench/README.md). A crashed owner's last quarter second
// of events is what the log may miss: events its clients most likely had
// already on their live streams.
const DefaultEventDelay = 250 * time.Millisecond

// DefaultMaxMessageBytes is Options.MaxMessageBytes by default: well above
// the HTTP endpoint's largest body by default (4 MiB).
const DefaultMaxMessageBytes = 64 << 20

// ErrInvalidOptions is returned, wrapped with the reason, by Start for
// options that cannot work.
var ErrInvalidOptions = errors.New("cluster: invalid options")

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether s may name a node or a cluster: 1 to 64
// letters, digits, '-' or '_'.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// DefaultConnectTimeout is how long Start keeps trying URLs by default.
const DefaultConnectTimeout = 30 * time.Second

// withDefaults checks o and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	if o.ClusterName == "" {
		o.ClusterName = "mcp"
	}
	if !namePattern.MatchString(o.ClusterName) {
		return o, fmt.Errorf("%w: cluster name %q: use 1 to 64 letters, digits, '-' or '_'", ErrInvalidOptions, o.ClusterName)
	}
	if o.NodeID == "" {
		o.NodeID = randomID(6)
	}
	if !namePattern.MatchString(o.NodeID) {
		return o, fmt.Errorf("%w: node ID %q: use 1 to 64 letters, digits, '-' or '_'", ErrInvalidOptions, o.NodeID)
	}
	if len(o.URLs) > 0 && (o.ClusterListen != "" || len(o.Routes) > 0) {
		return o, fmt.Errorf("%w: --nats-url uses an existing NATS deployment; --cluster-listen and --routes configure the embedded one: choose one", ErrInvalidOptions)
	}
	if len(o.Routes) > 0 && o.ClusterListen == "" {
		return o, fmt.Errorf("%w: routes need a route address of this node (--cluster-listen)", ErrInvalidOptions)
	}
	if o.ClusterListen != "" {
		if _, _, err := net.SplitHostPort(o.ClusterListen); err != nil {
			return o, fmt.Errorf("%w: cluster listen address %q: %v", ErrInvalidOptions, o.ClusterListen, err)
		}
	}
	if o.ClusterAdvertise != "" {
		if o.ClusterListen == "" {
			return o, fmt.Errorf("%w: an advertised route address needs a route address of this node (--cluster-listen)", ErrInvalidOptions)
		}
		if _, _, err := net.SplitHostPort(o.ClusterAdvertise); err != nil {
			return o, fmt.Errorf("%w: cluster advertise address %q: %v", ErrInvalidOptions, o.ClusterAdvertise, err)
		}
	}
	for _, r := range o.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" || (u.Scheme != "nats-route" && u.Scheme != "nats" && u.Scheme != "tls") {
			return o, fmt.Errorf("%w: route %q: want nats-route://host:port", ErrInvalidOptions, r)
		}
	}
	for _, r := range o.URLs {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return o, fmt.Errorf("%w: NATS URL %q: want nats://host:port", ErrInvalidOptions, r)
		}
	}
	if err := o.checkRouteSecurity(); err != nil {
		return o, err
	}
	if len(o.URLs) > 0 && (o.SyncAlways || o.SyncInterval != 0) {
		return o, fmt.Errorf("%w: --jetstream-sync configures the embedded NATS server; the servers of --nats-url are configured by their operator", ErrInvalidOptions)
	}
	if o.SyncInterval < 0 || (o.SyncAlways && o.SyncInterval != 0) {
		return o, fmt.Errorf("%w: JetStream syncs always or at a positive interval", ErrInvalidOptions)
	}
	if o.Replicas < 0 || o.Replicas > 5 {
		return o, fmt.Errorf("%w: replicas must be 1 to 5", ErrInvalidOptions)
	}
	if o.Replicas == 0 {
		o.Replicas = 1
		if len(o.URLs) > 0 || len(o.Routes) > 0 {
			o.Replicas = min(3, max(1, len(o.serverSet())))
		}
	}
	if o.LeaseTTL < 0 {
		return o, fmt.Errorf("%w: the lease TTL must be positive", ErrInvalidOptions)
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.LeaseTTL < 100*time.Millisecond {
		return o, fmt.Errorf("%w: a lease TTL under 100ms cannot be renewed in time", ErrInvalidOptions)
	}
	if o.EventMaxAge < 0 || o.EventsPerSession < 0 || o.EventBytes < 0 {
		return o, fmt.Errorf("%w: the event log's bounds must be positive", ErrInvalidOptions)
	}
	if o.SessionBytes < 0 || o.JournalBytes < 0 {
		return o, fmt.Errorf("%w: the stores' bounds must be positive", ErrInvalidOptions)
	}
	if o.SessionBytes == 0 {
		o.SessionBytes = DefaultStoreBytes
	}
	if o.JournalBytes == 0 {
		o.JournalBytes = DefaultStoreBytes
	}
	if o.EventMaxAge == 0 {
		o.EventMaxAge = 15 * time.Minute
	}
	if o.EventsPerSession == 0 {
		o.EventsPerSession = 512
	}
	if o.EventBytes == 0 {
		o.EventBytes = 256 << 20
	}
	if o.EventDelay == 0 {
		o.EventDelay = DefaultEventDelay
	}
	if o.MaxMessageBytes < 0 {
		return o, fmt.Errorf("%w: the largest message must be positive", ErrInvalidOptions)
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.DataDir == "" && len(o.URLs) == 0 {
		if o.ClusterListen != "" {
			return o, fmt.Errorf("%w: a clustered node needs a data directory (--data-dir): it keeps the cluster's replicated state", ErrInvalidOptions)
		}
		base, err := stateDir()
		if err != nil {
			return o, fmt.Errorf("%w: no data directory given and %v", ErrInvalidOptions, err)
		}
		o.DataDir = filepath.Join(base, "mcp-actors", o.ClusterName, o.NodeID)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Logger = o.Logger.With("node", o.NodeID)
	return o, nil
}

// checkRouteSecurity checks how the embedded server's routes
// authenticate: a route address needs a secret, mutual TLS or both; TLS
// takes its three files and goes with a route address.
func (o Options) checkRouteSecurity() error {
	tlsFiles := 0
	for _, f := range []string{o.ClusterTLSCert, o.ClusterTLSKey, o.ClusterCA} {
		if f != "" {
			tlsFiles++
		}
	}
	switch {
	case tlsFiles != 0 && tlsFiles != 3:
		return fmt.Errorf("%w: mutual TLS on routes needs a certificate, its key and the CAs of every node's certificate (--cluster-tls-cert, --cluster-tls-key and --cluster-ca)", ErrInvalidOptions)
	case o.ClusterListen == "" && tlsFiles != 0:
		return fmt.Errorf("%w: route TLS configures the embedded server's routes: it needs --cluster-listen", ErrInvalidOptions)
	case o.Secret != "" && o.SecretFile != "":
		return fmt.Errorf("%w: a route secret and a route secret file: choose one", ErrInvalidOptions)
	case o.SecretFile != "" && o.ClusterListen == "":
		return fmt.Errorf("%w: a route secret file configures the embedded server's routes: it needs --cluster-listen", ErrInvalidOptions)
	case o.ClusterListen != "" && o.Secret == "" && o.SecretFile == "" && tlsFiles == 0:
		return fmt.Errorf("%w: routes must authenticate: give --cluster-listen a secret (--cluster-secret-file, or --cluster-secret), mutual TLS (--cluster-tls-cert, --cluster-tls-key and --cluster-ca), or both", ErrInvalidOptions)
	}
	return nil
}

// routeTLS reports whether the routes use mutual TLS.
func (o Options) routeTLS() bool { return o.ClusterTLSCert != "" }

// serverSet returns the distinct servers the routes (or URLs) and this
// node's route address name.
func (o Options) serverSet() map[string]bool {
	set := map[string]bool{}
	for _, r := range append(append([]string{}, o.Routes...), o.URLs...) {
		if u, err := url.Parse(r); err == nil {
			set[strings.ToLower(u.Host)] = true
		}
	}
	if o.ClusterListen != "" {
		set[strings.ToLower(o.ClusterListen)] = true
	}
	return set
}

// eventStorage is where the event log is kept.
func (o Options) eventStorage() jetstream.StorageType {
	if o.EventFiles {
		return jetstream.FileStorage
	}
	return jetstream.MemoryStorage
}

// stateDir is where a program keeps state that outlives a run but is not
// configuration (the XDG base directory specification's state home):
// $XDG_STATE_HOME, else ~/.local/state.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state"), nil
}

// routesOnlySelf reports whether every route names this node itself (its
// route address or the one it advertises): such a node waits for others
// that will never come.
func (o Options) routesOnlySelf() bool {
	if len(o.Routes) == 0 {
		return false
	}
	self := map[string]bool{}
	for _, a := range []string{o.ClusterListen, o.ClusterAdvertise} {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		self[net.JoinHostPort(strings.ToLower(host), port)] = true
		if ip := net.ParseIP(host); host == "" || (ip != nil && (ip.IsUnspecified() || ip.IsLoopback())) {
			for _, h := range []string{"127.0.0.1", "::1", "localhost"} {
				self[net.JoinHostPort(h, port)] = true
			}
		}
	}
	for _, r := range o.Routes {
		u, err := url.Parse(r)
		if err != nil || !self[strings.ToLower(u.Host)] {
			return false
		}
	}
	return true
}

// DefaultStoreBytes is the default bound of the session directory and of
// the journals (Options.SessionBytes, Options.JournalBytes).
const DefaultStoreBytes = 1 << 30
