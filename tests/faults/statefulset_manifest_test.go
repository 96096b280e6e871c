package faults_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// manifestDir is the Kubernetes manifests the StatefulSet player reads.
const manifestDir = "../../deploy/kubernetes"

// manifest is what the StatefulSet player takes from deploy/kubernetes:
// what Kubernetes does with the pods depends on these, and so do the
// nodes' stop (the lame duck, the drain) and the Service's view of them.
type manifest struct {
	name           string        // the StatefulSet's: its pods are <name>-0, <name>-1, …
	replicas       int           // spec.replicas
	parallel       bool          // podManagementPolicy: Parallel
	grace          time.Duration // terminationGracePeriodSeconds: SIGKILL after
	lameDuck       time.Duration // the container's --lame-duck
	drain          time.Duration // the container's --shutdown-timeout
	readyPath      string        // the readiness probe's path
	readyPeriod    time.Duration // its periodSeconds
	readyFailures  int           // its failureThreshold
	maxUnavailable int           // the PodDisruptionBudget's
}

// k8sStatefulSet is the part of a StatefulSet the player reads.
type k8sStatefulSet struct {
	Metadata struct{ Name string }
	Spec     struct {
		Replicas            int    `yaml:"replicas"`
		PodManagementPolicy string `yaml:"podManagementPolicy"`
		Template            struct {
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Args           []string `yaml:"args"`
					ReadinessProbe struct {
						HTTPGet          struct{ Path string } `yaml:"httpGet"`
						PeriodSeconds    int                   `yaml:"periodSeconds"`
						FailureThreshold int                   `yaml:"failureThreshold"`
					} `yaml:"readinessProbe"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// k8sPDB is the part of a PodDisruptionBudget the player reads.
type k8sPDB struct {
	Spec struct {
		MaxUnavailable int `yaml:"maxUnavailable"`
	} `yaml:"spec"`
}

// readManifest reads deploy/kubernetes's StatefulSet and disruption
// budget.
func readManifest(t *testing.T) manifest {
	t.Helper()
	var ss k8sStatefulSet
	readYAML(t, "statefulset.yaml", &ss)
	var pdb k8sPDB
	readYAML(t, "pdb.yaml", &pdb)
	require.Len(t, ss.Spec.Template.Spec.Containers, 1, "the StatefulSet's containers")
	c := ss.Spec.Template.Spec.Containers[0]
	m := manifest{
		name:           ss.Metadata.Name,
		replicas:       ss.Spec.Replicas,
		parallel:       ss.Spec.PodManagementPolicy == "Parallel",
		grace:          time.Duration(ss.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second,
		lameDuck:       durationArg(t, c.Args, "--lame-duck"),
		drain:          durationArg(t, c.Args, "--shutdown-timeout"),
		readyPath:      c.ReadinessProbe.HTTPGet.Path,
		readyPeriod:    time.Duration(c.ReadinessProbe.PeriodSeconds) * time.Second,
		readyFailures:  c.ReadinessProbe.FailureThreshold,
		maxUnavailable: pdb.Spec.MaxUnavailable,
	}
	require.True(t, m.name != "" && m.replicas >= 3 && m.grace > 0 && m.readyPeriod > 0 && m.readyFailures > 0 && m.maxUnavailable > 0,
		"the manifests name the StatefulSet, three replicas or more, a grace period, a readiness probe and a disruption budget: %+v", m)
	return m
}

// pod is the name of the pod of ordinal i.
func (m manifest) pod(i int) string { return fmt.Sprintf("%s-%d", m.name, i) }

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(manifestDir, file))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), "reading %s", file)
}

// durationArg returns the value of flag (--flag=value) in args.
func durationArg(t *testing.T, args []string, flag string) time.Duration {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			d, err := time.ParseDuration(v)
			require.NoError(t, err, "%s in the StatefulSet", a)
			return d
		}
	}
	require.FailNow(t, "the StatefulSet's container has no "+flag)
	return 0
}
