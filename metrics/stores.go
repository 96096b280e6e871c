package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StoreSize is what one of a cluster's stores holds, and its bound
// (MaxBytes -1 or 0: none); ReplicaLag, the operations its replica
// furthest behind has yet to apply.
type StoreSize struct {
	Store      string
	Bytes      uint64
	MaxBytes   int64
	ReplicaLag uint64
}

// storeSizesEvery is how often the store sizes are read, at most: each
// read asks each store's leader.
const storeSizesEvery = 10 * time.Second

// RegisterClusterStores registers, for a cluster node, the gauges of its
// stores' sizes, read from sizes at a scrape, at most every 10 s:
//
//	mcp_cluster_store_bytes{store="…"}      (what the store holds, per replica)
//	mcp_cluster_store_max_bytes{store="…"}  (its bound; not served for a store without one)
//	mcp_cluster_store_replica_lag{store="…"} (operations its replica furthest behind has yet to apply)
func RegisterClusterStores(reg prometheus.Registerer, sizes func() []StoreSize) {
	reg.MustRegister(&storeCollector{sizes: sizes})
}

var (
	storeBytesDesc = prometheus.NewDesc("mcp_cluster_store_bytes",
		"Bytes a store of the cluster holds (per replica), as its leader reports; read at most every 10 s.", []string{"store"}, nil)
	storeMaxDesc = prometheus.NewDesc("mcp_cluster_store_max_bytes",
		"The bound of a store (--sessions-bytes, --journal-bytes, --event-bytes): at it, what would grow it is refused.", []string{"store"}, nil)
	storeLagDesc = prometheus.NewDesc("mcp_cluster_store_replica_lag",
		"Operations the replica of a store furthest behind its leader has yet to apply, as the leader reports; read at most every 10 s.", []string{"store"}, nil)
)

// storeCollector reads the sizes at a scrape, or gives the last read when
// it is recent.
type storeCollector struct {
	sizes func() []StoreSize

	mu   sync.Mutex // guards what follows; held through a read, so reads do not pile up
	at   time.Time
	last []StoreSize
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- storeBytesDesc
	ch <- storeMaxDesc
	ch <- storeLagDesc
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if time.Since(c.at) >= storeSizesEvery {
		c.last, c.at = c.sizes(), time.Now()
	}
	sizes := c.last
	c.mu.Unlock()
	for _, s := range sizes {
		ch <- prometheus.MustNewConstMetric(storeBytesDesc, prometheus.GaugeValue, float64(s.Bytes), s.Store)
		ch <- prometheus.MustNewConstMetric(storeLagDesc, prometheus.GaugeValue, float64(s.ReplicaLag), s.Store)
		if s.MaxBytes > 0 {
			ch <- prometheus.MustNewConstMetric(storeMaxDesc, prometheus.GaugeValue, float64(s.MaxBytes), s.Store)
		}
	}
}
