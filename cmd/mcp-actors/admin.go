package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/cluster"
)

// The admin path: an operator's door to a node, on its HTTP listener,
// closed unless the node has an admin token (--admin-token-file or
// MCP_ACTORS_ADMIN_TOKEN), and then only to requests that present it
// (Authorization: Bearer). `mcp-actors admin` is its client.
//
//	GET  /admin/cluster                the cluster as this node sees it: nodes, leases, stores
//	POST /admin/drain                  this node takes no new sessions (/readyz 503)
//	POST /admin/stores/{store}/remove  delete a store's stream (a storage conflict)
//	POST /admin/nodes/{node}/remove    remove a node lost for good from the storage

// minAdminToken is the shortest admin token accepted.
const minAdminToken = 16

// readAdminToken returns the admin token from file, else from the
// environment ("" for none).
func readAdminToken(file string) (string, error) {
	token := os.Getenv("MCP_ACTORS_ADMIN_TOKEN")
	if file != "" {
		if token != "" {
			return "", errors.New("--admin-token-file and $MCP_ACTORS_ADMIN_TOKEN give the same token: choose one")
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--admin-token-file: %w", err)
		}
		token = strings.TrimRight(string(b), "\r\n")
		if token == "" {
			return "", fmt.Errorf("--admin-token-file %s is empty", file)
		}
	}
	if token != "" && len(token) < minAdminToken {
		return "", fmt.Errorf("the admin token is %d characters: use %d or more (e.g. openssl rand -hex 32)", len(token), minAdminToken)
	}
	return token, nil
}

// adminHandler serves the admin path for node and srv to requests that
// present token.
func adminHandler(token string, node *cluster.Node, srv *mcpactors.Server, log *slog.Logger) http.Handler {
	want := sha256.Sum256([]byte(token))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/cluster", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		o, err := node.Overview(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, o)
	})
	mux.HandleFunc("POST /admin/drain", func(w http.ResponseWriter, _ *http.Request) {
		srv.Drain()
		log.Info("draining: taking no new sessions (admin)")
		writeJSON(w, map[string]any{"node": node.ID(), "draining": true, "open_sessions": srv.OpenSessions()})
	})
	mux.HandleFunc("POST /admin/stores/{store}/remove", func(w http.ResponseWriter, r *http.Request) {
		store := r.PathValue("store")
		err := node.RemoveStore(r.Context(), store)
		switch {
		case errors.Is(err, cluster.ErrUnknownStore):
			http.Error(w, err.Error(), http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			writeJSON(w, map[string]any{"store": store, "removed": true, "next": "restart every node: each creates the store again at start"})
		}
	})
	mux.HandleFunc("POST /admin/nodes/{node}/remove", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("node")
		err := node.RemoveNode(r.Context(), id)
		switch {
		case errors.Is(err, cluster.ErrUnknownNode):
			http.Error(w, err.Error(), http.StatusNotFound)
		case errors.Is(err, cluster.ErrNodeReachable):
			http.Error(w, err.Error(), http.StatusConflict)
		case errors.Is(err, cluster.ErrNotEmbedded):
			http.Error(w, err.Error(), http.StatusNotImplemented)
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			writeJSON(w, map[string]any{"node": id, "removed": true,
				"next": "its replicas move to the nodes left; never start it again on its data directory (a replacement takes a new ID)"})
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-actors admin"`)
			http.Error(w, "the admin path needs the node's admin token (Authorization: Bearer)", http.StatusUnauthorized)
			log.Debug("admin request refused: no or a wrong token", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		http.Error(w, "encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// adminCmd is the admin path's client: `mcp-actors admin status|drain|
// remove-store STORE|remove-node NODE --url http://node:8080`.
type adminCmd struct {
	URL       string `name:"url" default:"http://127.0.0.1:8080" env:"MCP_ACTORS_ADMIN_URL" help:"The node's HTTP address (its --listen, with scheme)."`
	TokenFile string `name:"token-file" env:"MCP_ACTORS_ADMIN_TOKEN_FILE" type:"existingfile" placeholder:"FILE" help:"File holding the node's admin token (else $MCP_ACTORS_ADMIN_TOKEN)."`
	CA        string `name:"ca" env:"MCP_ACTORS_ADMIN_CA" type:"existingfile" placeholder:"FILE" help:"PEM file of the CAs of the node's HTTPS certificate."`

	Status      adminStatusCmd     `cmd:"" help:"Show the cluster as the node sees it: nodes and their leases, session counts, each store's leader and replicas."`
	Drain       adminDrainCmd      `cmd:"" help:"Make the node take no new sessions (/readyz 503); its open sessions go on."`
	RemoveNode  adminRemoveNodeCmd `cmd:"" name:"remove-node" help:"Remove a node lost for good (its machine or volume gone) from the storage: its replicas move to the nodes left or to its replacement. Refused for a node the asked node still reaches."`
	RemoveStore adminRemoveCmd     `cmd:"" name:"remove-store" help:"Delete a store's JetStream stream (sessions, leases, catalog, events, journals) and all it holds, to clear a storage conflict; every node creates it again when it next starts."`
}

type adminStatusCmd struct {
	JSON bool `name:"json" help:"Print the JSON the node answers."`
}

type adminDrainCmd struct{}

type adminRemoveCmd struct {
	Store string `arg:"" enum:"sessions,leases,catalog,events,journals" help:"The store: ${enum}."`
	Yes   bool   `name:"yes" help:"Confirm: what the store holds is lost (for sessions, every session)."`
}

func (c *adminStatusCmd) Run(a *adminCmd) error {
	body, err := a.do(http.MethodGet, "/admin/cluster")
	if err != nil {
		return err
	}
	if c.JSON {
		_, err := os.Stdout.Write(body)
		return err
	}
	var o cluster.Overview
	if err := json.Unmarshal(body, &o); err != nil {
		return fmt.Errorf("the node's answer: %w", err)
	}
	printOverview(os.Stdout, &o)
	return nil
}

func (adminDrainCmd) Run(a *adminCmd) error {
	body, err := a.do(http.MethodPost, "/admin/drain")
	if err == nil {
		_, err = os.Stdout.Write(body)
	}
	return err
}

type adminRemoveNodeCmd struct {
	Node string `arg:"" help:"The lost node's ID (--node-id)."`
	Yes  bool   `name:"yes" help:"Confirm: the node is gone for good and will not start again on its data directory."`
}

func (c *adminRemoveNodeCmd) Run(a *adminCmd) error {
	if !c.Yes {
		return configError{fmt.Errorf("remove-node %s: the node must never start again on its data directory: add --yes", c.Node)}
	}
	body, err := a.do(http.MethodPost, "/admin/nodes/"+url.PathEscape(c.Node)+"/remove")
	if err == nil {
		_, err = os.Stdout.Write(body)
	}
	return err
}

func (c *adminRemoveCmd) Run(a *adminCmd) error {
	if !c.Yes {
		return configError{fmt.Errorf("remove-store %s deletes everything the store holds: add --yes", c.Store)}
	}
	body, err := a.do(http.MethodPost, "/admin/stores/"+c.Store+"/remove")
	if err == nil {
		_, err = os.Stdout.Write(body)
	}
	return err
}

// do sends an admin request and returns the answer's body (an error for
// anything but 200, naming the status and what the node said).
func (a *adminCmd) do(method, path string) ([]byte, error) {
	token, err := readAdminToken(a.TokenFile)
	if err != nil {
		return nil, configError{err}
	}
	if token == "" {
		return nil, configError{errors.New("no admin token: --token-file FILE or $MCP_ACTORS_ADMIN_TOKEN")}
	}
	client, err := adminClient(a.CA)
	if err != nil {
		return nil, configError{err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.URL, "/")+path, nil)
	if err != nil {
		return nil, configError{fmt.Errorf("--url %q: %w", a.URL, err)}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin request to %s: %w", a.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("admin request to %s: %w", a.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("admin request to %s: %s: %s", a.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

func printOverview(w io.Writer, o *cluster.Overview) {
	fmt.Fprintf(w, "cluster %s, asked node %s: %s\n", o.Cluster, o.Node, o.Ready)
	fmt.Fprintf(w, "routes to: %s\n\n", strings.Join(o.Peers, ", "))
	fmt.Fprintf(w, "%-24s %-10s %-10s %s\n", "NODE", "SESSIONS", "LEASE AGE", "STARTED")
	for _, n := range o.Nodes {
		sessions := "?"
		if n.Sessions != nil {
			sessions = fmt.Sprint(*n.Sessions)
		}
		fmt.Fprintf(w, "%-24s %-10s %-10s %s\n", n.ID, sessions, (time.Duration(n.LeaseAgeMS) * time.Millisecond).Round(100*time.Millisecond), n.Started.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "\n%-10s %-10s %-10s %-12s %s\n", "STORE", "LEADER", "MESSAGES", "BYTES", "REPLICAS")
	for _, s := range o.Storage {
		if s.Error != "" {
			fmt.Fprintf(w, "%-10s %s\n", s.Store, "error: "+s.Error)
			continue
		}
		var reps []string
		for _, r := range s.Replicas {
			state := "current"
			switch {
			case r.Offline:
				state = "offline"
			case !r.Current:
				state = fmt.Sprintf("behind %d", r.Lag)
			}
			reps = append(reps, r.Node+" "+state)
		}
		fmt.Fprintf(w, "%-10s %-10s %-10d %-12d %s\n", s.Store, s.Leader, s.Messages, s.Bytes, strings.Join(reps, ", "))
	}
}
