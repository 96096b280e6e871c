//go:build unix

package cluster_test

import (
	"context"
	"log/slog"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// BenchmarkSyncPolicy measures what JetStream's sync policy costs a write
// to a three-replica file bucket on three routed nodes (in this process),
// as the cluster's session directory takes them: a KV put waited for, and
// puts published without waiting, 64 at a time (as session state is
// written). "interval" is NATS's default (fsync every 2 min), "always"
// fsyncs before acknowledging. Besides ns/op (wall), cpu-ns/op is the
// process's CPU time per put, the three nodes together. Compare the two
// within one run, as ratios:
//
//	go test -run '^$' -bench BenchmarkSyncPolicy -benchtime 2000x -count 3 ./cluster/
func BenchmarkSyncPolicy(b *testing.B) {
	for _, policy := range []struct {
		name   string
		always bool
	}{{"interval", false}, {"always", true}} {
		b.Run(policy.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
			defer cancel()
			nodes, err := cluster.StartLocal(ctx, 3, b.TempDir(), cluster.Options{ClusterName: "sync" + policy.name,
				SyncAlways: policy.always, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(b, err)
			defer closeAll(nodes)
			js, err := jetstream.New(nodes[1].Conn()) // a node that may not lead the bucket
			require.NoError(b, err)
			kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "bench", History: 1,
				Storage: jetstream.FileStorage, Replicas: 3})
			require.NoError(b, err)
			value := make([]byte, 512)

			b.Run("put", func(b *testing.B) {
				cpu := cpuTime()
				i := 0
				for b.Loop() {
					i++
					_, err := kv.Put(ctx, "k"+strconv.Itoa(i%1024), value)
					require.NoError(b, err)
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
			b.Run("async64", func(b *testing.B) {
				cpu := cpuTime()
				i := 0
				for b.Loop() {
					i++
					m := &nats.Msg{Subject: "$KV.bench.a" + strconv.Itoa(i%1024), Data: value}
					_, err := js.PublishMsgAsync(m)
					require.NoError(b, err)
					if i%64 == 0 {
						<-js.PublishAsyncComplete()
					}
				}
				<-js.PublishAsyncComplete()
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		})
	}
}

// cpuTime returns the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
