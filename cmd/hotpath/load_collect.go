package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hotpathhq/hotpath/load"
)

const loadCollectUsage = `Usage: hotpath load collect --job NAME [flags]

Gathers the results of a 'hotpath load k8s' Job: lists the Job's pods and reads
their logs with kubectl, takes each pod's result line (hotpath-load-result: JSON),
and merges them exactly as 'hotpath load merge' does, printing the same summary
(or --json, --hgrm, --html).

A pod that printed no result (still pending or running, failed before its run,
evicted) is named on stderr with its state and the last lines of its log, and
the exit code is 1; the pods that did report are still merged and printed.

Exit codes: 0 every pod reported and the merged run succeeded; 1 a pod did not
report, kubectl failed, or no request of the merged run succeeded; 2 usage, or
results that are not one load; 3 a threshold (--threshold) failed on the merged
result.

Flags:
`

const loadCollectExample = `
Example:
  kubectl wait --for=condition=complete --timeout=-1s job/hotpath-load-20250101-120000-ab12
  hotpath load collect --job hotpath-load-20250101-120000-ab12 --html report.html
`

// collectParallel bounds the kubectl logs commands run at once.
const collectParallel = 8

// logTailLines is how many last lines of a silent pod's log collect shows.
const logTailLines = 5

// runLoadCollect implements `hotpath load collect`.
func runLoadCollect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load collect", flag.ContinueOnError)
	job := fs.String("job", "", "the Job's `name` (printed by hotpath load k8s)")
	namespace := fs.String("namespace", "", "the Job's `namespace` (default: kubectl's current one)")
	kubectl := fs.String("kubectl", "", "the kubectl `program` (default $HOTPATH_KUBECTL, else kubectl)")
	jsonOut := fs.Bool("json", false, "write the merged result as JSON instead of the summary")
	hgrm := fs.String("hgrm", "", "write the merged latency distribution (.hgrm) to `file` (- for stdout)")
	html := fs.String("html", "", "write an HTML report of the merged result to `file`")
	summaryMD := fs.String("summary-md", "", "write a Markdown summary of the merged result to `file`")
	force := fs.Bool("force", false, "merge results that do not line up (start times or durations) anyway, with a warning")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadCollectUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), loadCollectExample)
	}
	pos, rc, ok := parseFlags(fs, args, true, stdout, stderr)
	if !ok {
		return rc
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "hotpath load collect: unexpected arguments %q: name the Job with --job (see hotpath load collect -h)\n", pos)
		return 2
	}
	if !isDNSLabel(*job, 63) {
		fmt.Fprintf(stderr, "hotpath load collect: --job %q: want the Job's name, as hotpath load k8s printed it (see hotpath load collect -h)\n", *job)
		return 2
	}
	kc := kubectlRunner{bin: kubectlProgram(*kubectl), namespace: *namespace}
	pods, shards, err := kc.jobPods(*job)
	if err != nil {
		printErr(stderr, "load collect", "", err)
		return 1
	}
	if len(pods) == 0 {
		where := "the current namespace"
		if *namespace != "" {
			where = "namespace " + *namespace
		}
		fmt.Fprintf(stderr, "hotpath load collect: no pods of job %s in %s: is the name right (kubectl get jobs)? A finished Job and its pods are deleted after a day (ttlSecondsAfterFinished)\n", *job, where)
		return 1
	}
	kc.readLogs(pods)

	var runs []*load.Result
	var from []string // the pod each run came from, for messages
	var silent []*jobPod
	reported := map[string]bool{} // shard indexes some pod reported
	for _, p := range pods {
		if len(p.results) == 0 {
			silent = append(silent, p)
		} else {
			reported[p.index()] = true
		}
		for _, r := range p.results {
			runs = append(runs, r)
			from = append(from, "pod "+p.Name)
		}
	}
	code := 0
	for _, p := range silent {
		if reported[p.index()] && p.index() != "?" {
			// Kubernetes ran this shard twice and the other pod reported.
			fmt.Fprintf(stderr, "hotpath load collect: note: pod %s (%s) printed no result; another pod of shard %s did\n", p.Name, p.state(), p.index())
			continue
		}
		code = 1
		fmt.Fprintf(stderr, "hotpath load collect: pod %s (shard %s, %s) printed no result", p.Name, p.index(), p.state())
		if p.logErr != nil {
			fmt.Fprintf(stderr, "; its log could not be read: %v\n", p.logErr)
			continue
		}
		if p.resultErr != nil {
			fmt.Fprintf(stderr, ": %v\n", p.resultErr)
			continue
		}
		tail := lastLines(p.log, logTailLines)
		if len(tail) == 0 {
			fmt.Fprintln(stderr, "; its log is empty")
			continue
		}
		fmt.Fprintln(stderr, "; the end of its log:")
		for _, l := range tail {
			fmt.Fprintf(stderr, "    %s\n", l)
		}
	}
	if missing := missingIndexes(pods, shards); len(missing) > 0 {
		code = 1
		fmt.Fprintf(stderr, "hotpath load collect: no pod for shard(s) %s of %d (kubectl describe job/%s says why)\n", strings.Join(missing, ", "), shards, *job)
	}
	if len(runs) == 0 {
		fmt.Fprintf(stderr, "hotpath load collect: no pod of job %s printed a result: nothing to merge\n", *job)
		return 1
	}

	res, rc := mergeRuns("load collect", runs, from, *force, "Were they run by one Job? --force merges these anyway.", stderr)
	if res == nil {
		return rc
	}
	if err := writeOutputs(res, *jsonOut, *hgrm, *html, *summaryMD, stdout); err != nil {
		printErr(stderr, "load collect", "", err)
		return 1
	}
	if err := res.Check(); err != nil {
		printErr(stderr, "load collect", "the merged runs failed: ", err)
		return 1
	}
	if code != 0 {
		fmt.Fprintf(stderr, "hotpath load collect: merged %d result(s) of %d pod(s): the shards above are missing from it\n", len(runs), len(pods))
		return code
	}
	return thresholdVerdict("load collect", res, stderr)
}

// kubectlRunner runs kubectl for one namespace ("" for kubectl's current
// one).
type kubectlRunner struct {
	bin, namespace string
}

// run runs kubectl with args and returns its stdout; an error carries
// kubectl's stderr.
func (k kubectlRunner) run(args ...string) ([]byte, error) {
	if k.namespace != "" {
		args = append(args, "--namespace", k.namespace)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(k.bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		err = kubectlError(k.bin, args, err)
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			err = fmt.Errorf("%v: %s", err, msg)
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// jobPod is one pod of the Job: the parts of the Pod object collect uses
// (decoded without the Kubernetes API packages, which hotpath does not
// import), then its log and the results found in it.
type jobPod struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Containers []struct {
			Env []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"env"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase             string `json:"phase"`
		Reason            string `json:"reason"`
		ContainerStatuses []struct {
			State map[string]struct {
				Reason   string `json:"reason"`
				ExitCode *int   `json:"exitCode"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`

	Name      string `json:"-"`
	log       []byte
	logErr    error // kubectl logs failed
	resultErr error // a result line did not read
	results   []*load.Result
}

// The annotation Kubernetes puts the completion index of an Indexed Job's
// pod in.
const completionIndexAnnotation = "batch.kubernetes.io/job-completion-index"

func (p *jobPod) index() string {
	if i, ok := p.Metadata.Annotations[completionIndexAnnotation]; ok {
		return i
	}
	return "?"
}

// state says where the pod is: its phase, and its container's state
// reason and exit code when it has them ("Failed, terminated: Error,
// exit code 1"; "Pending, waiting: ImagePullBackOff").
func (p *jobPod) state() string {
	s := p.Status.Phase
	if s == "" {
		s = "phase unknown"
	}
	if p.Status.Reason != "" {
		s += " (" + p.Status.Reason + ")"
	}
	for _, cs := range p.Status.ContainerStatuses {
		for kind, st := range cs.State {
			s += ", " + kind
			if st.Reason != "" {
				s += ": " + st.Reason
			}
			if st.ExitCode != nil {
				s += fmt.Sprintf(", exit code %d", *st.ExitCode)
			}
		}
	}
	return s
}

// jobPods lists the Job's pods, ordered by shard, and the number of
// shards (HOTPATH_SHARDS in their spec; 0 when unknown).
func (k kubectlRunner) jobPods(job string) ([]*jobPod, int, error) {
	out, err := k.run("get", "pods", "--selector", "job-name="+job, "--output", "json")
	if err != nil {
		return nil, 0, err
	}
	var list struct {
		Items []*jobPod `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, 0, fmt.Errorf("%s get pods: not a pod list: %v", k.bin, err)
	}
	shards := 0
	for _, p := range list.Items {
		p.Name = p.Metadata.Name
		for _, c := range p.Spec.Containers {
			for _, e := range c.Env {
				if n, err := strconv.Atoi(e.Value); e.Name == "HOTPATH_SHARDS" && err == nil {
					shards = max(shards, n)
				}
			}
		}
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		a, errA := strconv.Atoi(list.Items[i].index())
		b, errB := strconv.Atoi(list.Items[j].index())
		if errA != nil || errB != nil || a == b {
			return list.Items[i].Name < list.Items[j].Name
		}
		return a < b
	})
	return list.Items, shards, nil
}

// readLogs reads every pod's log, a few at a time, and the results in
// them.
func (k kubectlRunner) readLogs(pods []*jobPod) {
	sem := make(chan struct{}, collectParallel)
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p.log, p.logErr = k.run("logs", p.Name)
			if p.logErr == nil {
				p.results, p.resultErr = resultsInLog(p.log)
			}
		})
	}
	wg.Wait()
}

// resultsInLog returns the results of the log's result lines (normally
// one), each read and checked as `hotpath load merge` reads a file.
func resultsInLog(log []byte) ([]*load.Result, error) {
	var rs []*load.Result
	for line := range bytes.Lines(log) {
		payload, ok := bytes.CutPrefix(line, []byte(ResultLinePrefix))
		if !ok {
			continue
		}
		r, err := load.ReadResult(bytes.NewReader(payload))
		if err != nil {
			return nil, fmt.Errorf("a result line that does not read: %v", unprefixedLoad(err))
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func unprefixedLoad(err error) string { return strings.TrimPrefix(err.Error(), "load: ") }

// lastLines returns the last n non-empty lines of log, each cut to 300
// bytes (a log line may be a megabyte of JSON).
func lastLines(log []byte, n int) []string {
	var lines []string
	for l := range bytes.Lines(log) {
		l = bytes.TrimRight(l, "\r\n")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		s := string(l)
		if len(s) > 300 {
			s = strings.ToValidUTF8(s[:300], "") + "..."
		}
		lines = append(lines, s)
	}
	return lines[max(0, len(lines)-n):]
}

// missingIndexes returns the shard indexes below shards that no pod has.
func missingIndexes(pods []*jobPod, shards int) []string {
	have := map[string]bool{}
	for _, p := range pods {
		have[p.index()] = true
	}
	var missing []string
	for i := range shards {
		if !have[strconv.Itoa(i)] {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	return missing
}
