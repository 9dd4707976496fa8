package main

import (
	"bytes"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"
)

// The Indexed Job that `hotpath load k8s` prints: a text/template whose
// every field carries a YAML comment saying why it is set. Every string
// it writes goes through yamlQuote.
//
//go:embed load_k8s.yaml.tmpl
var k8sJobTemplate string

var k8sJobTmpl = template.Must(template.New("job").Funcs(template.FuncMap{"q": yamlQuote}).Parse(k8sJobTemplate))

// Defaults of `hotpath load k8s`.
const (
	k8sDefaultImage   = "ghcr.io/hotpathhq/hotpath:latest"
	k8sDefaultStartIn = 30 * time.Second
	k8sDefaultCPU     = "1"
	k8sDefaultMemory  = "512Mi"
	// k8sMaxShards is Kubernetes' limit on completions (and parallelism)
	// of an Indexed Job with a per-index backoff limit.
	k8sMaxShards = 100_000
)

// loadBoolFlags are the flags of `hotpath load` that take no value. The
// k8s command passes the load flags through to the pods unparsed, and
// needs to know which ones consume the next argument to find the URL.
// TestLoadBoolFlags checks this list against the load command's flags.
var loadBoolFlags = map[string]bool{"k": true, "keepalive": true, "json": true, "quiet": true, "result-line": true}

// loadFlagsSetByK8s are load flags the Job sets itself, and why a user
// may not pass them through.
var loadFlagsSetByK8s = map[string]string{
	"shard":       "each pod's shard comes from its JOB_COMPLETION_INDEX and HOTPATH_SHARDS (set --shards)",
	"start-at":    "the Job sets the common start time (set --start-in)",
	"result-line": "the Job sets it: the pods print their result as a marker line for collect",
	"run-id":      "set it with --run-id of hotpath load k8s",
	"json":        "the pods print their result to their log: pass --json to hotpath load collect",
	"html":        "a file written in a pod is lost with it: pass --html to hotpath load collect",
	"hgrm":        "a file written in a pod is lost with it: pass --hgrm to hotpath load collect",
	"targets":     "a target file here is not in the pods",
	"summary-md":  "a file written in a pod is lost with it: pass --summary-md to hotpath load collect",
}

const loadK8sUsage = `Usage: hotpath load k8s --shards N [flags] [load flags] URL

Prints a Kubernetes Indexed Job that runs 'hotpath load' as N shards, one pod each,
all starting at the same instant; --apply pipes it to 'kubectl apply -f -'. Each pod
runs shard JOB_COMPLETION_INDEX/N and prints its result as one line in its log;
'hotpath load collect --job NAME' gathers and merges them exactly.

The load flags (-c, --rate, -n, -d, -H, --data, --proto, ...; see hotpath load -h)
pass to every pod as given. --rate, -n and -c are totals for the whole Job: each shard
takes its part (shard i of N sends at R/N, its arrivals interleaved with the others').
Output flags (--json, --html, --hgrm) belong to 'hotpath load collect'.

Flags:
`

const loadK8sExample = `
Examples:
  hotpath load k8s --shards 4 --rate 40000 -c 200 -d 60s http://api.prod.svc:8080/ > job.yaml
  hotpath load k8s --shards 4 --rate 40000 -d 60s --apply http://api.prod.svc:8080/
  kubectl wait --for=condition=complete --timeout=-1s job/NAME
  hotpath load collect --job NAME --html report.html

The start time is absolute (now + --start-in): apply the manifest right away. Pods
that are not running by then start late, and their results say by how much.

Exit codes: 0 printed (or applied); 1 kubectl apply failed; 2 usage.
`

// runLoadK8s implements `hotpath load k8s`.
func runLoadK8s(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load k8s", flag.ContinueOnError)
	shards := fs.Int("shards", 0, "number of `shards`: pods, each running its part of the load (required)")
	name := fs.String("name", "", "the Job's `name` (default hotpath-load-RUNID)")
	image := fs.String("image", k8sDefaultImage, "the hotpath container `image` (see the Dockerfile to build your own)")
	startIn := fs.Duration("start-in", k8sDefaultStartIn, "start every shard this `duration` after now: time for the pods to be scheduled and pull the image")
	namespace := fs.String("namespace", "", "the Job's `namespace` (default: kubectl's current one)")
	cpu := fs.String("cpu", k8sDefaultCPU, "CPU of each pod, requested and limited (Guaranteed QoS), as a Kubernetes `quantity` (1, 500m)")
	memory := fs.String("memory", k8sDefaultMemory, "memory of each pod, requested and limited, as a Kubernetes `quantity`")
	runID := fs.String("run-id", "", "the `label` every shard's result carries (default: generated from the time)")
	apply := fs.Bool("apply", false, "pipe the Job to 'kubectl apply -f -' instead of printing it")
	kubectl := fs.String("kubectl", "", "the kubectl `program` for --apply (default $HOTPATH_KUBECTL, else kubectl)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadK8sUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), loadK8sExample)
	}
	own, loadArgs, pos, err := splitK8sArgs(fs, args)
	if err != nil {
		printErr(stderr, "load k8s", "", err)
		fmt.Fprintln(stderr, "Run 'hotpath load k8s -h' for its flags.")
		return 2
	}
	if _, rc, ok := parseFlags(fs, own, false, stdout, stderr); !ok {
		return rc
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hotpath load k8s: "+format+" (see hotpath load k8s -h)\n", a...)
		return 2
	}
	if len(pos) != 1 {
		return usage("want one URL after the flags, got %d arguments %q", len(pos), pos)
	}
	target := pos[0]
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usage("%q is not an http:// or https:// URL", target)
	}
	if *shards < 1 || *shards > k8sMaxShards {
		return usage("--shards %d: want 1 to %d shards", *shards, k8sMaxShards)
	}
	if *startIn <= 0 {
		return usage("--start-in %s: must be greater than 0", *startIn)
	}
	for _, q := range []struct{ flag, v string }{{"--cpu", *cpu}, {"--memory", *memory}} {
		if !isQuantity(q.v) {
			return usage("%s %q is not a Kubernetes quantity (like 1, 500m, 512Mi, 2Gi)", q.flag, q.v)
		}
	}
	if *image == "" || strings.ContainsAny(*image, " \t\r\n") {
		return usage("--image %q is not an image reference", *image)
	}
	if *namespace != "" && !isDNSLabel(*namespace, 63) {
		return usage("--namespace %q is not a namespace name (lowercase letters, digits and '-', at most 63)", *namespace)
	}
	now := time.Now()
	if *runID == "" {
		*runID = now.UTC().Format("20060102-150405") + fmt.Sprintf("-%04x", rand.Uint32N(1<<16))
	} else if !isLabelValue(*runID) {
		return usage("--run-id %q must be a Kubernetes label value (letters, digits, '-', '_', '.', at most 63)", *runID)
	}
	if *name == "" {
		*name = "hotpath-load-" + strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(*runID))
		*name = strings.Trim((*name)[:min(len(*name), k8sMaxName(*shards))], "-")
	}
	if max := k8sMaxName(*shards); !isDNSLabel(*name, max) {
		return usage("--name %q: want a DNS label (lowercase letters, digits and '-') of at most %d characters, so that pod hostnames NAME-%d fit in 63", *name, max, *shards-1)
	}
	for _, a := range loadArgs {
		if !utf8.ValidString(a) {
			return usage("load flag %q is not valid UTF-8 (Kubernetes manifests are UTF-8 text)", a)
		}
	}
	// The load flags run in the pods, minutes from now: check them here,
	// where a mistake is cheap. -h after them makes the load command parse
	// them and stop, without a URL and without running anything.
	var lerr bytes.Buffer
	if rc := runLoad(append(append([]string{}, loadArgs...), "-h"), io.Discard, &lerr); rc != 0 {
		msg, _, _ := strings.Cut(strings.TrimPrefix(lerr.String(), "hotpath load: "), "\n")
		return usage("the load flags would fail in every pod: %s", msg)
	}
	if u.Hostname() == "localhost" || strings.HasPrefix(u.Hostname(), "127.") || u.Hostname() == "::1" {
		fmt.Fprintf(stderr, "hotpath load k8s: warning: %s is the pod itself inside a pod: use the server's Service name or address\n", u.Host)
	}

	start := now.Add(*startIn).UTC().Truncate(time.Second)
	job := k8sJob{
		Name: *name, Namespace: *namespace, Image: *image, RunID: *runID, Shards: *shards,
		StartAt: start.Format(time.RFC3339), CPU: *cpu, Memory: *memory,
	}
	job.Args = append([]string{"load", "--result-line", "--start-at", job.StartAt, "--run-id", job.RunID}, loadArgs...)
	job.Args = append(job.Args, target)
	job.DeadlineS = k8sDeadline(*startIn, loadArgs)
	var manifest bytes.Buffer
	if err := k8sJobTmpl.Execute(&manifest, job); err != nil {
		printErr(stderr, "load k8s", "", err)
		return 1
	}
	ns := ""
	if *namespace != "" {
		ns = " --namespace " + *namespace
	}
	next := fmt.Sprintf("hotpath load k8s: job %s (run %s, %d shards) starts at %s; then:\n  kubectl wait --for=condition=complete --timeout=-1s job/%s%s\n  hotpath load collect --job %s%s\n",
		*name, *runID, *shards, job.StartAt, *name, ns, *name, ns)
	if !*apply {
		if _, err := stdout.Write(manifest.Bytes()); err != nil {
			printErr(stderr, "load k8s", "", err)
			return 1
		}
		fmt.Fprint(stderr, next)
		return 0
	}
	bin := kubectlProgram(*kubectl)
	cmd := exec.Command(bin, "apply", "-f", "-")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &manifest, stdout, stderr
	if err := cmd.Run(); err != nil {
		printErr(stderr, "load k8s", "", kubectlError(bin, []string{"apply", "-f", "-"}, err))
		return 1
	}
	if time.Now().After(start) {
		fmt.Fprintf(stderr, "hotpath load k8s: warning: applied after the start time %s: the shards start late (raise --start-in)\n", job.StartAt)
	}
	fmt.Fprint(stderr, next)
	return 0
}

// k8sJob is what the Job template needs.
type k8sJob struct {
	Name, Namespace, Image, RunID string
	Shards                        int
	StartAt                       string // RFC 3339, UTC
	CPU, Memory                   string // Kubernetes quantities
	Args                          []string
	DeadlineS                     int64 // activeDeadlineSeconds; 0: none
}

// splitK8sArgs separates the k8s command's own flags (those fs defines,
// returned in own for fs to parse) from the load flags that pass through
// to the pods (loadArgs, as given) and the positional arguments (pos),
// in any order. A load flag that takes a value takes the next argument
// unless written -flag=value (loadBoolFlags take none).
func splitK8sArgs(fs *flag.FlagSet, args []string) (own, loadArgs, pos []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "h" || name == "help" {
			own = append(own, a)
			continue
		}
		if f := fs.Lookup(name); f != nil {
			own = append(own, a)
			bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
			if !hasValue && !(isBool && bf.IsBoolFlag()) && i+1 < len(args) {
				i++
				own = append(own, args[i])
			}
			continue
		}
		if why, ok := loadFlagsSetByK8s[name]; ok {
			return nil, nil, nil, fmt.Errorf("%s: not a flag to pass to the pods: %s", a, why)
		}
		if name == "data" || name == "data-binary" {
			v, _, _ := strings.Cut(a, "=")
			if hasValue {
				_, v, _ = strings.Cut(a, "=")
			} else if i+1 < len(args) {
				v = args[i+1]
			}
			if strings.HasPrefix(v, "@") {
				return nil, nil, nil, fmt.Errorf("%s %s: a file here is not in the pods: pass the body inline", a, v)
			}
		}
		loadArgs = append(loadArgs, a)
		if !hasValue && !loadBoolFlags[name] {
			if i+1 >= len(args) {
				return nil, nil, nil, fmt.Errorf("load flag %s needs a value", a)
			}
			i++
			loadArgs = append(loadArgs, args[i])
		}
	}
	return own, loadArgs, pos, nil
}

// k8sDeadline is the Job's activeDeadlineSeconds: the start slack, the
// run's duration and one request timeout, plus 5 minutes; 0 (no
// deadline) when the run is bounded by -n alone and its length unknown.
func k8sDeadline(startIn time.Duration, loadArgs []string) int64 {
	var d, timeout time.Duration
	requests := false
	for i := 0; i < len(loadArgs); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(loadArgs[i], "-"), "=")
		if !hasValue && !loadBoolFlags[name] && i+1 < len(loadArgs) {
			i++
			value = loadArgs[i]
		}
		switch name {
		case "d":
			d, _, _ = parseSeconds(value)
		case "timeout":
			timeout, _, _ = parseSeconds(value)
		case "n":
			requests = true
		case "stages", "conn-stages":
			st, _ := parseStages(value)
			for _, s := range st {
				d += s.Duration
			}
		}
	}
	if d == 0 {
		if requests {
			return 0
		}
		d = 10 * time.Second // the load command's default duration
	}
	if timeout == 0 {
		timeout = 10 * time.Second // the load command's default timeout
	}
	return int64((startIn + d + timeout + 5*time.Minute).Seconds() + 0.999)
}

// k8sMaxName is the longest Job name whose pod hostnames (NAME-INDEX)
// fit in a DNS label (63) for the largest index of n shards.
func k8sMaxName(n int) int { return 63 - 1 - len(strconv.Itoa(n-1)) }

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// isDNSLabel reports whether s is an RFC 1123 label of at most max bytes.
func isDNSLabel(s string, max int) bool { return len(s) <= max && dnsLabel.MatchString(s) }

var labelValue = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

// isLabelValue reports whether s is a non-empty Kubernetes label value.
func isLabelValue(s string) bool { return len(s) <= 63 && labelValue.MatchString(s) }

// quantity is Kubernetes' resource.Quantity syntax: a decimal number and
// a binary (Ki...Ei) or decimal (m, k, M...E) suffix or an exponent.
var quantity = regexp.MustCompile(`^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][-+]?[0-9]+)?$`)

// isQuantity reports whether s is a positive Kubernetes quantity.
func isQuantity(s string) bool {
	m := quantity.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	return err == nil && f > 0
}

// yamlQuote returns s as a YAML double-quoted scalar: the value is s
// exactly, whatever it holds (quotes, colons, '#', newlines, "null",
// "yes", "0x10"). Printable characters stand as they are; '"' and '\'
// are escaped; the rest become \uXXXX or \UXXXXXXXX, escapes YAML and
// Go's strconv.Unquote read alike. s must be valid UTF-8.
func yamlQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		case unicode.IsPrint(r) && r != '\u00a0': // YAML reads a raw NBSP fine, but it is invisible: escape it
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// kubectlProgram is the kubectl to run: the --kubectl flag, else
// $HOTPATH_KUBECTL, else kubectl from PATH. Tests point it at a fake.
func kubectlProgram(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if env := os.Getenv("HOTPATH_KUBECTL"); env != "" {
		return env
	}
	return "kubectl"
}

// kubectlError says which kubectl command failed and how.
func kubectlError(bin string, args []string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s not found: install kubectl, or point --kubectl or HOTPATH_KUBECTL at it", bin)
	}
	return fmt.Errorf("%s %s: %v", bin, strings.Join(args, " "), err)
}
