package cluster

// subjects names everything the cluster uses on NATS, all under its name,
// so that two clusters can share one deployment:
//
//	mcpx.<cluster>.node.<node>.session   actor messages for the sessions <node> owns (request-reply)
//	mcpx.<cluster>.node.<node>.stream    stream events for the streams <node> holds
//	mcpx.<cluster>.node.<node>.async.<boot>-<n>  complaints about requests sent without waiting (async.go)
//	mcpx.<cluster>.events.<session>      a session's event log (the JetStream stream mcpx_<cluster>_events)
//	mcpx_<cluster>_sessions, _nodes, _catalog   JetStream buckets
type subjects struct {
	cluster string
	prefix  string
}

func newSubjects(cluster string) subjects {
	return subjects{cluster: cluster, prefix: "mcpx." + cluster + "."}
}

// session is the subject of actor messages for node's sessions.
func (s subjects) session(node string) string { return s.prefix + "node." + node + ".session" }

// async is the prefix of the reply subjects of the requests node sends
// without waiting (the request's stream, as "<boot>-<n>", follows).
func (s subjects) async(node string) string { return s.prefix + "node." + node + ".async." }

// stream is the subject of stream events for node's streams.
func (s subjects) stream(node string) string { return s.prefix + "node." + node + ".stream" }

// modern is where a node takes the modern requests forwarded to it (the
// retries of its continuations), and modernEnd where it learns that one's
// client request has ended.
func (s subjects) modern(node string) string    { return s.prefix + "node." + node + ".modern" }
func (s subjects) modernEnd(node string) string { return s.prefix + "node." + node + ".modern-end" }

// completions is where every node learns of a URL elicitation's
// completion.
func (s subjects) completions() string { return s.prefix + "elicitations.complete" }

// bucket names one of the cluster's JetStream buckets.
func (s subjects) bucket(name string) string { return "mcpx_" + s.cluster + "_" + name }

// events is the subject of session id's event log.
func (s subjects) events(id string) string { return s.prefix + "events." + id }

// key is the subject a write of key in one of the cluster's KV buckets is
// published to.
func (s subjects) key(bucket, key string) string { return "$KV." + s.bucket(bucket) + "." + key }
