// Package kubernetes checks the manifests in this directory by decoding them
// into the Kubernetes API types (strictly: an unknown or misspelt field fails)
// and asserting the settings a cluster of mcp-actors nodes depends on. It is a
// module of its own so that the runtime's module does not depend on the
// Kubernetes API; .ci/run tests it.
package kubernetes

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const app = "mcp-actors"

func decode[T any](t *testing.T, file string) *T {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var v T
	require.NoError(t, yaml.UnmarshalStrict(b, &v), "%s does not decode as %T", file, v)
	return &v
}

// flags returns the container's --name=value arguments.
func flags(t *testing.T, c corev1.Container) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NotEmpty(t, c.Args)
	assert.Equal(t, "serve", c.Args[0])
	for _, a := range c.Args[1:] {
		name, value, ok := strings.Cut(a, "=")
		require.True(t, ok && strings.HasPrefix(name, "--"), "argument %q: want --flag=value", a)
		out[name] = value
	}
	return out
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name   string `json:"name"`
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	b, err := os.ReadFile("kustomization.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(b, &k))
	assert.Equal(t, "Kustomization", k.Kind)
	assert.ElementsMatch(t, []string{"service-headless.yaml", "service.yaml", "statefulset.yaml", "pdb.yaml", "networkpolicy.yaml"}, k.Resources,
		"every manifest but podmonitor.yaml (its kind exists only with the Prometheus Operator)")

	// The image is pinned to a release here, and only here.
	s := decode[appsv1.StatefulSet](t, "statefulset.yaml")
	image := s.Spec.Template.Spec.Containers[0].Image
	assert.NotContains(t, image, ":", "the StatefulSet names the image without a tag; kustomization.yaml pins it")
	require.Len(t, k.Images, 1)
	assert.Equal(t, image, k.Images[0].Name)
	assert.Regexp(t, `^v[0-9]+\.[0-9]+\.[0-9]+$`, k.Images[0].NewTag, "a release, never latest")
}

func TestStatefulSet(t *testing.T) {
	s := decode[appsv1.StatefulSet](t, "statefulset.yaml")
	hl := decode[corev1.Service](t, "service-headless.yaml")
	assert.Equal(t, "StatefulSet", s.Kind)
	assert.Equal(t, appsv1.ParallelPodManagement, s.Spec.PodManagementPolicy,
		"a node is ready only once it joined another: one-at-a-time start never gets past pod 0")
	assert.Equal(t, hl.Name, s.Spec.ServiceName, "the pods' DNS names come from the headless service")
	require.NotNil(t, s.Spec.Replicas)
	replicas := int(*s.Spec.Replicas)
	assert.Equal(t, 3, replicas)
	assert.Equal(t, app, s.Spec.Selector.MatchLabels["app.kubernetes.io/name"])
	assert.Equal(t, s.Spec.Selector.MatchLabels, s.Spec.Template.Labels)

	pod := s.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	f := flags(t, c)

	// The node ID is the pod's name.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, name := range []string{"MCP_ACTORS_NODE_ID", "POD_NAME"} {
		e, ok := env[name]
		require.True(t, ok, "env %s", name)
		require.NotNil(t, e.ValueFrom, name)
		require.NotNil(t, e.ValueFrom.FieldRef, name)
		assert.Equal(t, "metadata.name", e.ValueFrom.FieldRef.FieldPath, name)
	}
	assert.NotContains(t, f, "--node-id", "the node ID comes from the pod name (MCP_ACTORS_NODE_ID)")

	// Routes by the headless service's DNS names, one per pod, on its port.
	port := hl.Spec.Ports[0].Port
	var want []string
	for i := range replicas {
		want = append(want, fmt.Sprintf("nats-route://%s-%d.%s:%d", s.Name, i, hl.Name, port))
	}
	assert.Equal(t, strings.Join(want, ","), f["--routes"])
	assert.Equal(t, fmt.Sprintf("$(POD_NAME).%s:%d", hl.Name, port), f["--cluster-advertise"])
	assert.Equal(t, fmt.Sprintf("0.0.0.0:%d", port), f["--cluster-listen"])

	// Ports by name, as the services and probes use them.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Equal(t, port, ports["routes"])
	assert.Equal(t, "0.0.0.0:"+fmt.Sprint(ports["http"]), f["--listen"])

	// The data directory on a persistent volume per pod.
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	require.Len(t, s.Spec.VolumeClaimTemplates, 1)
	pvc := s.Spec.VolumeClaimTemplates[0]
	assert.Equal(t, f["--data-dir"], mounts[pvc.Name].MountPath)
	assert.Contains(t, pvc.Spec.AccessModes, corev1.ReadWriteOnce)
	assert.False(t, pvc.Spec.Resources.Requests.Storage().IsZero())

	// The cluster secret from a mounted Secret file, never a flag value.
	assert.NotContains(t, f, "--cluster-secret")
	_, inEnv := env["MCP_ACTORS_CLUSTER_SECRET"]
	assert.False(t, inEnv)
	file := f["--cluster-secret-file"]
	require.NotEmpty(t, file)
	var secretVol *corev1.Volume
	for i, v := range pod.Volumes {
		if m, ok := mounts[v.Name]; ok && strings.HasPrefix(file, m.MountPath+"/") {
			secretVol = &pod.Volumes[i]
			assert.True(t, m.ReadOnly)
		}
	}
	require.NotNil(t, secretVol, "no mounted volume holds %s", file)
	require.NotNil(t, secretVol.Secret, "%s is not a Secret volume", secretVol.Name)
	require.NotNil(t, secretVol.Secret.DefaultMode)
	assert.Zero(t, *secretVol.Secret.DefaultMode&0o007, "the secret file is not readable by others")
	require.NotNil(t, pod.SecurityContext)
	require.NotNil(t, pod.SecurityContext.FSGroup, "the non-root user reads the secret through its group")
	assert.NotZero(t, *secretVol.Secret.DefaultMode&0o040)

	// Hardening: no API token, the runtime's default seccomp profile.
	require.NotNil(t, pod.AutomountServiceAccountToken)
	assert.False(t, *pod.AutomountServiceAccountToken, "the nodes never call the Kubernetes API")
	require.NotNil(t, pod.SecurityContext.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)

	// Spread: never two pods on one machine; over zones when labelled.
	spread := map[string]corev1.TopologySpreadConstraint{}
	for _, c := range pod.TopologySpreadConstraints {
		spread[c.TopologyKey] = c
		require.NotNil(t, c.LabelSelector)
		assert.Equal(t, s.Spec.Selector.MatchLabels, c.LabelSelector.MatchLabels)
	}
	require.Contains(t, spread, "kubernetes.io/hostname")
	assert.Equal(t, corev1.DoNotSchedule, spread["kubernetes.io/hostname"].WhenUnsatisfiable)
	assert.EqualValues(t, 1, spread["kubernetes.io/hostname"].MaxSkew)
	require.Contains(t, spread, "topology.kubernetes.io/zone")
	assert.Equal(t, corev1.ScheduleAnyway, spread["topology.kubernetes.io/zone"].WhenUnsatisfiable)

	// Probes.
	require.NotNil(t, c.LivenessProbe)
	require.NotNil(t, c.LivenessProbe.HTTPGet)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "http", c.LivenessProbe.HTTPGet.Port.String())
	require.NotNil(t, c.ReadinessProbe)
	require.NotNil(t, c.ReadinessProbe.HTTPGet)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port.String())
	require.NotNil(t, c.StartupProbe, "a startup probe holds liveness off while a node joins its cluster")
	require.NotNil(t, c.StartupProbe.HTTPGet)
	assert.Equal(t, "/startupz", c.StartupProbe.HTTPGet.Path)
	assert.Equal(t, "http", c.StartupProbe.HTTPGet.Port.String())
	assert.GreaterOrEqual(t, c.StartupProbe.PeriodSeconds*c.StartupProbe.FailureThreshold, int32(300),
		"a new cluster's pods get minutes to find each other before the kubelet restarts one")

	// The kubelet waits for the node's whole stop: the lame duck (the
	// Service drops the pod meanwhile), the drain, the lease given up.
	shutdown, err := time.ParseDuration(f["--shutdown-timeout"])
	require.NoError(t, err, "--shutdown-timeout")
	lameDuck, err := time.ParseDuration(f["--lame-duck"])
	require.NoError(t, err, "--lame-duck")
	assert.GreaterOrEqual(t, lameDuck, 5*time.Second, "long enough for the endpoints to drop a terminating pod")
	require.NotNil(t, pod.TerminationGracePeriodSeconds)
	assert.GreaterOrEqual(t, time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second, lameDuck+shutdown+5*time.Second,
		"the grace period covers the lame duck, the drain and giving the lease up")
	assert.Nil(t, c.Lifecycle, "no preStop hook: the image has no shell or sleep; the lame duck is in the process")

	// The memory limit sizes the node: no GOMEMLIMIT or --max-sessions
	// to keep in step with it.
	assert.False(t, c.Resources.Limits.Memory().IsZero(), "a memory limit")
	assert.NotContains(t, f, "--max-sessions", "derived from the memory limit")
	_, memEnv := env["GOMEMLIMIT"]
	assert.False(t, memEnv, "GOMEMLIMIT is derived from the memory limit")

	// Operators' paths on a port of their own.
	assert.Equal(t, "0.0.0.0:"+fmt.Sprint(ports["admin"]), f["--admin-listen"])
	assert.NotEqual(t, ports["http"], ports["admin"])
	assert.Equal(t, fmt.Sprint(ports["admin"]), s.Spec.Template.Annotations["prometheus.io/port"])

	// Not root, nothing written outside the volume.
	require.NotNil(t, pod.SecurityContext.RunAsNonRoot)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	require.NotNil(t, c.SecurityContext)
	require.NotNil(t, c.SecurityContext.ReadOnlyRootFilesystem)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
}

func TestHeadlessService(t *testing.T) {
	s := decode[corev1.Service](t, "service-headless.yaml")
	assert.Equal(t, corev1.ClusterIPNone, s.Spec.ClusterIP)
	assert.True(t, s.Spec.PublishNotReadyAddresses, "routes must resolve before a node is ready")
	assert.Equal(t, app, s.Spec.Selector["app.kubernetes.io/name"])
	require.Len(t, s.Spec.Ports, 1)
	assert.Equal(t, "routes", s.Spec.Ports[0].TargetPort.String())
}

func TestClientService(t *testing.T) {
	s := decode[corev1.Service](t, "service.yaml")
	assert.NotEqual(t, corev1.ClusterIPNone, s.Spec.ClusterIP)
	assert.False(t, s.Spec.PublishNotReadyAddresses, "clients reach ready nodes only")
	assert.Equal(t, app, s.Spec.Selector["app.kubernetes.io/name"])
	require.Len(t, s.Spec.Ports, 1)
	assert.Equal(t, "http", s.Spec.Ports[0].TargetPort.String())
}

func TestPodDisruptionBudget(t *testing.T) {
	p := decode[policyv1.PodDisruptionBudget](t, "pdb.yaml")
	require.NotNil(t, p.Spec.MaxUnavailable)
	assert.Equal(t, "1", p.Spec.MaxUnavailable.String())
	assert.Nil(t, p.Spec.MinAvailable)
	assert.Equal(t, app, p.Spec.Selector.MatchLabels["app.kubernetes.io/name"])
}

// TestNetworkPolicy: clients reach the http port, the nodes each other's
// routes, the monitoring namespace the admin port; nothing else gets in.
func TestNetworkPolicy(t *testing.T) {
	p := decode[networkingv1.NetworkPolicy](t, "networkpolicy.yaml")
	s := decode[appsv1.StatefulSet](t, "statefulset.yaml")
	assert.Equal(t, s.Spec.Selector.MatchLabels, p.Spec.PodSelector.MatchLabels)
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, p.Spec.PolicyTypes)
	containerPorts := map[string]bool{}
	for _, cp := range s.Spec.Template.Spec.Containers[0].Ports {
		containerPorts[cp.Name] = true
	}
	byPort := map[string]networkingv1.NetworkPolicyIngressRule{}
	for _, r := range p.Spec.Ingress {
		require.Len(t, r.Ports, 1)
		name := r.Ports[0].Port.String()
		assert.True(t, containerPorts[name], "port %s is the container's", name)
		byPort[name] = r
	}
	assert.ElementsMatch(t, []string{"http", "routes", "admin"}, slices.Collect(maps.Keys(byPort)))
	assert.Empty(t, byPort["http"].From, "clients come from anywhere")
	require.Len(t, byPort["routes"].From, 1)
	require.NotNil(t, byPort["routes"].From[0].PodSelector)
	assert.Equal(t, s.Spec.Selector.MatchLabels, byPort["routes"].From[0].PodSelector.MatchLabels, "routes from the other nodes only")
	require.Len(t, byPort["admin"].From, 1)
	assert.NotNil(t, byPort["admin"].From[0].NamespaceSelector, "the admin port from the monitoring namespace only")
}

// TestPodMonitor: the Prometheus Operator scrapes the admin port's
// /metrics of the StatefulSet's pods.
func TestPodMonitor(t *testing.T) {
	m := decode[monitoringv1.PodMonitor](t, "podmonitor.yaml")
	s := decode[appsv1.StatefulSet](t, "statefulset.yaml")
	assert.Equal(t, "PodMonitor", m.Kind)
	assert.Equal(t, s.Spec.Selector.MatchLabels, m.Spec.Selector.MatchLabels)
	require.Len(t, m.Spec.PodMetricsEndpoints, 1)
	e := m.Spec.PodMetricsEndpoints[0]
	require.NotNil(t, e.Port)
	assert.Equal(t, "admin", *e.Port)
	assert.Equal(t, "/metrics", e.Path)
}

func TestEveryManifestHasItsKind(t *testing.T) {
	for file, kind := range map[string]string{
		"statefulset.yaml": "StatefulSet", "service.yaml": "Service",
		"service-headless.yaml": "Service", "pdb.yaml": "PodDisruptionBudget",
		"networkpolicy.yaml": "NetworkPolicy", "podmonitor.yaml": "PodMonitor",
	} {
		var m struct {
			Kind string `json:"kind"`
		}
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(b, &m))
		assert.Equal(t, kind, m.Kind, file)
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			assert.True(t, slices.Contains([]string{"statefulset.yaml", "service.yaml", "service-headless.yaml", "pdb.yaml", "networkpolicy.yaml", "podmonitor.yaml", "kustomization.yaml"}, e.Name()), "unchecked manifest %s", e.Name())
		}
	}
}
