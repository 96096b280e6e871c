package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// clusterFlags configure the node's cluster: by default an embedded NATS
// server of its own (no client port, JetStream under --data-dir); with
// --cluster-listen and --routes, embedded servers joined into one cluster
// by routes that authenticate (a secret, mutual TLS, or both); with
// --nats-url, an existing NATS deployment.
type clusterFlags struct {
	NodeID        string        `name:"node-id" env:"MCP_ACTORS_NODE_ID" help:"This node's ID in the cluster (letters, digits, - and _). Default: <host>-<listen port>, stable across restarts."`
	DataDir       string        `name:"data-dir" env:"MCP_ACTORS_DATA_DIR" help:"Where the embedded NATS server keeps its JetStream store (the cluster's replicated state: back it up, never put it in a cache). Required with --cluster-listen; alone, default <state dir>/mcp-actors/<cluster>/<node> ($XDG_STATE_HOME, else ~/.local/state)."`
	ClusterName   string        `name:"cluster-name" default:"mcp" env:"MCP_ACTORS_CLUSTER_NAME" help:"The cluster's name; every subject and bucket it uses is named under it."`
	ClusterListen string        `name:"cluster-listen" env:"MCP_ACTORS_CLUSTER_LISTEN" help:"Route address (HOST:PORT) of the embedded NATS server, for other nodes to join."`
	ClusterAdv    string        `name:"cluster-advertise" env:"MCP_ACTORS_CLUSTER_ADVERTISE" help:"Route address (HOST:PORT) other nodes dial to reach this one, when it differs from --cluster-listen (NAT, a proxy)."`
	Routes        []string      `name:"routes" env:"MCP_ACTORS_ROUTES" help:"Route URLs of the cluster's nodes (nats-route://HOST:PORT,...); may include this node's own."`
	ClusterSecret string        `name:"cluster-secret" env:"MCP_ACTORS_CLUSTER_SECRET" help:"Secret every route must present: a node without it cannot join. Prefer --cluster-secret-file or the environment: a flag shows in the process listing."`
	SecretFile    string        `name:"cluster-secret-file" env:"MCP_ACTORS_CLUSTER_SECRET_FILE" type:"existingfile" placeholder:"FILE" help:"File of route secrets, one per line, instead of --cluster-secret: the first is presented, every line accepted. Read again when it changes: rotate the secret without a restart (docs/operations.md)."`
	ClusterTLS    string        `name:"cluster-tls-cert" env:"MCP_ACTORS_CLUSTER_TLS_CERT" type:"existingfile" placeholder:"FILE" help:"This node's route certificate (PEM): routes use mutual TLS; needs --cluster-tls-key and --cluster-ca."`
	ClusterTLSKey string        `name:"cluster-tls-key" env:"MCP_ACTORS_CLUSTER_TLS_KEY" type:"existingfile" placeholder:"FILE" help:"The private key (PEM) of --cluster-tls-cert."`
	ClusterCA     string        `name:"cluster-ca" env:"MCP_ACTORS_CLUSTER_CA" type:"existingfile" placeholder:"FILE" help:"PEM file of the CAs that sign every node's route certificate: each node verifies the others'."`
	JetStreamSync string        `name:"jetstream-sync" env:"MCP_ACTORS_JETSTREAM_SYNC" placeholder:"always|DURATION" help:"When the embedded server's JetStream writes to disk (fsync): always, before it acknowledges a write, or every DURATION, acknowledging first (a power failure may lose what was acknowledged since the last sync; a process crash loses nothing). Default: NATS's, 2m. See docs/cluster.md, Durability."`
	NATSURL       []string      `name:"nats-url" env:"MCP_ACTORS_NATS_URL" help:"Use an existing NATS cluster (with JetStream) instead of the embedded server: URL,... (a user and password or a token may be in the URL)."`
	NATSCreds     string        `name:"nats-creds" env:"MCP_ACTORS_NATS_CREDS" type:"existingfile" help:"NATS credentials file (JWT and NKey) for --nats-url."`
	NATSCA        string        `name:"nats-ca" env:"MCP_ACTORS_NATS_CA" type:"existingfile" help:"PEM file of the CAs of the NATS servers' TLS certificates (--nats-url)."`
	NATSWait      time.Duration `name:"nats-connect-timeout" default:"30s" env:"MCP_ACTORS_NATS_CONNECT_TIMEOUT" help:"How long to keep trying --nats-url at start (with backoff) before giving up."`
	Replicas      int           `name:"replicas" env:"MCP_ACTORS_REPLICAS" help:"Copies JetStream keeps of the cluster's state (default: 1 alone, 3 in a cluster)."`
	LeaseTTL      time.Duration `name:"lease-ttl" default:"15s" env:"MCP_ACTORS_LEASE_TTL" help:"How long a node's lease lasts unrenewed; its sessions may be taken over after. Keep it above JetStream's leader election time (4-9 s)."`
	EventMaxAge   time.Duration `name:"event-max-age" default:"15m" env:"MCP_ACTORS_EVENT_MAX_AGE" help:"How long the sessions' event logs (Last-Event-ID resumption on any node) are kept in JetStream."`
	EventsPerSess int           `name:"events-per-session" default:"512" env:"MCP_ACTORS_EVENTS_PER_SESSION" help:"Events of one session its event log keeps in JetStream; the oldest go first."`
	EventBytes    int64         `name:"event-bytes" default:"268435456" env:"MCP_ACTORS_EVENT_BYTES" help:"Bytes the event logs of all sessions keep in JetStream; the oldest go first."`
	EventDelay    time.Duration `name:"event-delay" default:"250ms" env:"MCP_ACTORS_EVENT_DELAY" help:"How long a node lets logged events gather before it writes them to JetStream as one batch (0: at once). A crashed node loses at most this much of its sessions' events."`
	EventFiles    bool          `name:"event-files" default:"true" negatable:"" env:"MCP_ACTORS_EVENT_FILES" help:"Keep the event logs in JetStream files (the default). --no-event-files keeps them in memory: less CPU per event, but lost with every replica at once, and a replicated log in memory can be left without a leader after two of its replicas restart, when no session can be taken over or started again."`
	SessionBytes  int64         `name:"sessions-bytes" default:"1073741824" env:"MCP_ACTORS_SESSIONS_BYTES" help:"Bytes the session directory (every session's owner and State) may take in JetStream, per replica; at the bound a new session gets 503. A directory made earlier takes it when a node that creates stores starts."`
	JournalBytes  int64         `name:"journal-bytes" default:"1073741824" env:"MCP_ACTORS_JOURNAL_BYTES" help:"Bytes the journals of protocol 2026-07-28 requests (and their answered rounds) may take in JetStream, per replica; at the bound a request that needs one more gets an error."`

	// maxBody is serve's --max-body: a request that large must cross
	// nodes (cluster.Options.MaxMessageBytes).
	maxBody      int64
	secret       string        `kong:"-"` // --cluster-secret, or read from --cluster-secret-file
	syncAlways   bool          `kong:"-"` // --jetstream-sync always
	syncInterval time.Duration `kong:"-"` // --jetstream-sync DURATION
}

func (f *clusterFlags) validate() error {
	if f.NodeID != "" && !cluster.ValidName(f.NodeID) {
		return fmt.Errorf("--node-id %q: use 1 to 64 letters, digits, '-' or '_'", f.NodeID)
	}
	if !cluster.ValidName(f.ClusterName) {
		return fmt.Errorf("--cluster-name %q: use 1 to 64 letters, digits, '-' or '_'", f.ClusterName)
	}
	if f.NATSWait <= 0 {
		return fmt.Errorf("--nats-connect-timeout must be positive (got %s)", f.NATSWait)
	}
	if len(f.NATSURL) > 0 && (f.ClusterListen != "" || len(f.Routes) > 0) {
		return fmt.Errorf("--nats-url uses an existing NATS cluster; --cluster-listen and --routes configure the embedded one: choose one")
	}
	if len(f.Routes) > 0 && f.ClusterListen == "" {
		return fmt.Errorf("--routes needs --cluster-listen (this node's route address)")
	}
	if f.ClusterAdv != "" && f.ClusterListen == "" {
		return fmt.Errorf("--cluster-advertise needs --cluster-listen (the address it stands for)")
	}
	if f.NATSCreds != "" && len(f.NATSURL) == 0 {
		return fmt.Errorf("--nats-creds goes with --nats-url")
	}
	if f.NATSCA != "" && len(f.NATSURL) == 0 {
		return fmt.Errorf("--nats-ca goes with --nats-url")
	}
	if err := f.validateRoutes(); err != nil {
		return err
	}
	if f.ClusterListen != "" && f.DataDir == "" {
		return fmt.Errorf("--cluster-listen needs --data-dir: a clustered node keeps replicated state there (never in a cache directory)")
	}
	if err := f.parseSync(); err != nil {
		return err
	}
	if f.LeaseTTL <= 0 {
		return fmt.Errorf("--lease-ttl must be positive (got %s)", f.LeaseTTL)
	}
	if f.EventMaxAge <= 0 {
		return fmt.Errorf("--event-max-age must be positive (got %s)", f.EventMaxAge)
	}
	if f.EventsPerSess <= 0 {
		return fmt.Errorf("--events-per-session must be positive (got %d)", f.EventsPerSess)
	}
	if f.EventDelay < 0 {
		return fmt.Errorf("--event-delay must not be negative (got %s)", f.EventDelay)
	}
	if f.SessionBytes <= 0 || f.JournalBytes <= 0 {
		return fmt.Errorf("--sessions-bytes and --journal-bytes must be positive (got %d and %d)", f.SessionBytes, f.JournalBytes)
	}
	if f.EventBytes <= 0 {
		return fmt.Errorf("--event-bytes must be positive (got %d)", f.EventBytes)
	}
	return nil
}

// start joins the cluster; listen is the HTTP listener's address, which
// names the node by default.
func (f *clusterFlags) start(ctx context.Context, log *slog.Logger, listen net.Addr) (*cluster.Node, error) {
	id := f.NodeID
	if id == "" {
		id = defaultNodeID(listen)
	}
	node, err := cluster.Start(ctx, cluster.Options{
		NodeID:           id,
		ClusterName:      f.ClusterName,
		DataDir:          f.DataDir,
		ClusterListen:    f.ClusterListen,
		ClusterAdvertise: f.ClusterAdv,
		Routes:           splitList(f.Routes),
		Secret:           f.ClusterSecret,
		SecretFile:       f.secretFile(),
		ClusterTLSCert:   f.ClusterTLS,
		ClusterTLSKey:    f.ClusterTLSKey,
		ClusterCA:        f.ClusterCA,
		SyncAlways:       f.syncAlways,
		SyncInterval:     f.syncInterval,
		URLs:             splitList(f.NATSURL),
		CredsFile:        f.NATSCreds,
		CAFile:           f.NATSCA,
		ConnectTimeout:   f.NATSWait,
		Replicas:         f.Replicas,
		LeaseTTL:         f.LeaseTTL,
		EventMaxAge:      f.EventMaxAge,
		EventsPerSession: f.EventsPerSess,
		EventBytes:       f.EventBytes,
		EventFiles:       f.EventFiles,
		SessionBytes:     f.SessionBytes,
		JournalBytes:     f.JournalBytes,
		EventDelay:       eventDelay(f.EventDelay),
		MaxMessageBytes:  max(cluster.DefaultMaxMessageBytes, int(f.maxBody)+(1<<20)), // the body and its envelope
		Logger:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.stage(), err)
	}
	return node, nil
}

// describe returns the serving line's attributes of the cluster: where
// the node listens for routes and the routes it was given (--routes, or
// the NATS servers of --nats-url, without credentials).
func (f *clusterFlags) describe() []any {
	switch {
	case len(f.NATSURL) > 0:
		return []any{"nats", cluster.RedactURLs(splitList(f.NATSURL))}
	case f.ClusterListen != "":
		return []any{"cluster_listen", f.ClusterListen, "routes", cluster.RedactURLs(splitList(f.Routes))}
	}
	return []any{"routes", "none (a node on its own)"}
}

// stage names the start-up stage start runs, for its failure.
func (f *clusterFlags) stage() string {
	switch {
	case len(f.NATSURL) > 0:
		return "connecting to NATS (--nats-url)"
	case f.ClusterListen != "":
		return "starting the embedded NATS server and joining the cluster"
	}
	return "starting the embedded NATS server"
}

// validateRoutes checks how the routes authenticate, and reads the secret:
// a route address needs a secret (from the flag, the environment or a
// file), mutual TLS, or both.
func (f *clusterFlags) validateRoutes() error {
	f.secret = f.ClusterSecret
	if f.SecretFile != "" {
		if f.ClusterSecret != "" {
			return fmt.Errorf("--cluster-secret and --cluster-secret-file give the same secret: choose one")
		}
		b, err := os.ReadFile(f.SecretFile)
		if err != nil {
			return fmt.Errorf("--cluster-secret-file: %w", err)
		}
		f.secret = strings.TrimSpace(string(b))
		if f.secret == "" {
			return fmt.Errorf("--cluster-secret-file %s is empty", f.SecretFile)
		}
	}
	tls := f.ClusterTLS != "" || f.ClusterTLSKey != "" || f.ClusterCA != ""
	switch {
	case tls && (f.ClusterTLS == "" || f.ClusterTLSKey == "" || f.ClusterCA == ""):
		return fmt.Errorf("--cluster-tls-cert, --cluster-tls-key and --cluster-ca go together")
	case tls && f.ClusterListen == "":
		return fmt.Errorf("--cluster-tls-cert, --cluster-tls-key and --cluster-ca configure routes: they need --cluster-listen")
	case f.ClusterListen != "" && f.secret == "" && !tls:
		return fmt.Errorf("--cluster-listen needs route authentication: a secret (--cluster-secret-file, $MCP_ACTORS_CLUSTER_SECRET or --cluster-secret), mutual TLS (--cluster-tls-cert, --cluster-tls-key and --cluster-ca), or both")
	}
	return nil
}

// secretFile is --cluster-secret-file when the embedded server has a
// route port to guard with it; "" otherwise (a node alone, or on
// --nats-url, has no routes).
func (f *clusterFlags) secretFile() string {
	if f.ClusterListen == "" {
		return ""
	}
	return f.SecretFile
}

// parseSync parses --jetstream-sync: "always" or a positive duration.
func (f *clusterFlags) parseSync() error {
	switch f.JetStreamSync {
	case "":
		return nil
	case "always":
		f.syncAlways = true
	default:
		d, err := time.ParseDuration(f.JetStreamSync)
		if err != nil || d <= 0 {
			return fmt.Errorf("--jetstream-sync %q: want always or a positive duration (e.g. 1s)", f.JetStreamSync)
		}
		f.syncInterval = d
	}
	if len(f.NATSURL) > 0 {
		return fmt.Errorf("--jetstream-sync configures the embedded NATS server; the servers of --nats-url are configured by their operator")
	}
	return nil
}

// eventDelay maps --event-delay to Options.EventDelay, where 0 means the
// default and a negative delay none.
func eventDelay(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

var notNodeChar = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// defaultNodeID is <host>-<port>: stable across restarts, and distinct for
// several nodes on one host.
func defaultNodeID(listen net.Addr) string {
	host, _ := os.Hostname()
	host = strings.Trim(notNodeChar.ReplaceAllString(host, "-"), "-")
	if host == "" {
		host = "node"
	}
	if len(host) > 40 {
		host = host[:40]
	}
	_, port, _ := net.SplitHostPort(listen.String())
	return host + "-" + port
}

// splitList splits comma-separated values (kong splits flags, not
// environment values given as one string).
func splitList(in []string) []string {
	var out []string
	for _, v := range in {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
