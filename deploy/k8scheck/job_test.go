package k8scheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// hotpath is the command built from this checkout (go.mod's replace).
var hotpath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "k8scheck")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hotpath = filepath.Join(dir, "hotpath")
	build := exec.Command("go", "build", "-o", hotpath, "github.com/hotpathhq/hotpath/cmd/hotpath")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building hotpath:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// render runs `hotpath load k8s args...` and returns the manifest.
func render(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(hotpath, append([]string{"load", "k8s"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("hotpath load k8s %q: %v\n%s", args, err, errOut.String())
	}
	return out.Bytes()
}

// decode decodes a manifest strictly into a batch/v1 Job: an unknown
// field, a duplicate field or a value of the wrong type fails, as it
// would in `kubectl apply --validate=strict`.
func decode(t *testing.T, manifest []byte) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(manifest, &job); err != nil {
		t.Fatalf("the manifest does not decode strictly into a batch/v1 Job: %v\n%s", err, manifest)
	}
	return &job
}

// The user's flags with YAML's hard cases: quotes, a colon and a '#' in a
// header, a newline, a tab and non-ASCII text in a body, a value YAML
// would read as a boolean or a number unquoted.
var userFlags = []string{
	"--rate", "40000", "-c", "200", "-d", "60s",
	"-H", `X-Note: a "quoted": value # not a comment`,
	"-H", "X-Flag: yes",
	"--data", "{\"k\": [1, 2]}\n\tsecond line é 日本",
	"-m", "POST",
}

const target = "http://api.perf.svc.cluster.local:8080/ingest?a=1&b=2"

func TestJobDecodesAndShards(t *testing.T) {
	before := time.Now()
	args := append([]string{"--shards", "4", "--run-id", "bench-42", "--namespace", "perf", "--cpu", "2", "--memory", "1Gi", "--image", "registry.example.com/hotpath:v1", "--start-in", "40s"}, userFlags...)
	manifest := render(t, append(args, target)...)
	job := decode(t, manifest)

	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("apiVersion/kind %s/%s, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	if errs := validation.IsDNS1123Label(job.Name); len(errs) > 0 || job.Namespace != "perf" {
		t.Errorf("name %q (%v), namespace %q", job.Name, errs, job.Namespace)
	}
	for k, v := range job.Labels {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			t.Errorf("label %s=%s: %v", k, v, errs)
		}
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != 4 || *s.Parallelism != 4 {
		t.Errorf("completions %v, parallelism %v: want 4 and 4", s.Completions, s.Parallelism)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex %v: want 0 (a rerun shard would start late)", s.BackoffLimitPerIndex)
	}
	// 40 s to start, 60 s of load, a 10 s timeout, 5 minutes of slack.
	if s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 40+60+10+300 {
		t.Errorf("activeDeadlineSeconds %v, want %d", s.ActiveDeadlineSeconds, 40+60+10+300)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never", pod.RestartPolicy)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod gets a service account token it does not need")
	}

	// Anti-affinity: preferred, by node, selecting this run's pods.
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil || len(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("no preferred pod anti-affinity: %+v", pod.Affinity)
	}
	term := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname {
		t.Errorf("anti-affinity topologyKey %q, want %s", term.TopologyKey, corev1.LabelHostname)
	}
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(s.Template.Labels)) {
		t.Errorf("anti-affinity selector %v (%v) does not select the Job's pods %v", sel, err, s.Template.Labels)
	}

	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "registry.example.com/hotpath:v1" {
		t.Errorf("image %q", c.Image)
	}
	// Guaranteed QoS: requests = limits for CPU and memory.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || req.Cmp(lim) != 0 {
			t.Errorf("%s: request %s, limit %s: want them equal and set", r, req.String(), lim.String())
		}
	}
	if cpu := c.Resources.Limits[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("cpu %s, want 2", cpu.String())
	}
	if mem := c.Resources.Limits[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("memory %s, want 1Gi", mem.String())
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if env["HOTPATH_SHARDS"].Value != "4" {
		t.Errorf("HOTPATH_SHARDS %+v, want 4", env["HOTPATH_SHARDS"])
	}
	if f := env["GOMAXPROCS"].ValueFrom; f == nil || f.ResourceFieldRef == nil || f.ResourceFieldRef.Resource != "limits.cpu" || f.ResourceFieldRef.ContainerName != c.Name {
		t.Errorf("GOMAXPROCS %+v: want the container's CPU limit", env["GOMAXPROCS"])
	}

	// args: load --result-line --start-at T --run-id ID, the user's flags as
	// given, the URL.
	a := c.Args
	if len(a) < 6 || a[0] != "load" || a[1] != "--result-line" || a[2] != "--start-at" || a[4] != "--run-id" || a[5] != "bench-42" {
		t.Fatalf("args %q: want load --result-line --start-at T --run-id bench-42 first", a)
	}
	start, err := time.Parse(time.RFC3339, a[3])
	if err != nil || start.Location() != time.UTC {
		t.Errorf("--start-at %q: want RFC 3339 UTC (%v)", a[3], err)
	}
	if !start.After(before.Add(39*time.Second)) || start.After(time.Now().Add(40*time.Second)) {
		t.Errorf("--start-at %s: want about 40 s after %s", start, before)
	}
	if want := append(slices.Clone(userFlags), target); !slices.Equal(a[6:], want) {
		t.Errorf("the user's flags and URL\n got %q\nwant %q", a[6:], want)
	}
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want a non-root user", sc)
	}
}

// The defaults: a generated name and run id that Kubernetes accepts.
func TestJobDefaults(t *testing.T) {
	job := decode(t, render(t, "--shards", "100000", "-n", "1000000", "http://svc:8080/"))
	if errs := validation.IsDNS1123Label(job.Name); len(errs) > 0 {
		t.Errorf("generated name %q: %v", job.Name, errs)
	}
	if host := fmt.Sprintf("%s-%d", job.Name, 99999); len(validation.IsDNS1123Label(host)) > 0 {
		t.Errorf("pod hostname %q is not a DNS label", host)
	}
	if *job.Spec.Completions != 100000 || job.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("completions %d, deadline %v: want 100000 and none (an -n run's length is unknown)", *job.Spec.Completions, job.Spec.ActiveDeadlineSeconds)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if c.Image != "ghcr.io/hotpathhq/hotpath:latest" || !slices.Contains(c.Args, "--run-id") {
		t.Errorf("image %q, args %q", c.Image, c.Args)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if req, lim := c.Resources.Requests[r], c.Resources.Limits[r]; req.IsZero() || req.Cmp(lim) != 0 {
			t.Errorf("%s: request %s, limit %s", r, req.String(), lim.String())
		}
	}
}

// The strict decode is what catches a misspelt field: check that it does.
func TestStrictDecodeCatchesTypos(t *testing.T) {
	manifest := render(t, "--shards", "2", "http://svc/")
	bad := bytes.Replace(manifest, []byte("completionMode:"), []byte("completionMod:"), 1)
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(bad, &job); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Errorf("a misspelt field decoded: %v", err)
	}
}

// kubectl's own client-side check, where a cluster is reachable: kubectl
// reads the API's schema from the cluster, so without one it cannot run
// (it fails with "failed to download openapi" or "unable to recognize").
// Opt in with HOTPATH_KUBECTL_DRYRUN=1.
func TestKubectlDryRun(t *testing.T) {
	if os.Getenv("HOTPATH_KUBECTL_DRYRUN") != "1" {
		t.Skip("set HOTPATH_KUBECTL_DRYRUN=1 to run kubectl apply --dry-run=client (it needs a reachable cluster)")
	}
	manifest := render(t, append(append([]string{"--shards", "4"}, userFlags...), target)...)
	var out bytes.Buffer
	cmd := exec.Command("kubectl", "apply", "--dry-run=client", "--validate=strict", "-f", "-")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(manifest), &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl apply --dry-run=client: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "created (dry run)") && !strings.Contains(out.String(), "configured (dry run)") {
		t.Errorf("kubectl said: %s", out.String())
	}
}
