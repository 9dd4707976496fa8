package lab

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/hotpathhq/hotpath/server"
)

// Seed 003: GET, POST JSON, pooled and with-headers requests across
// net/http, resty v2, req v3, fasthttp and hotpath's client.Transport.
//
// The client libraries are kept out of the library's go.mod: they live in
// bench/peers (package labclients, its own module) and every client,
// net/http included, runs in a child process, lab-clients, which the lab
// builds from the source tree and drives one command at a time. So all
// five are measured the same way, and B/op and allocs/op are the client's
// alone.

// clientsChild is one lab-clients process: one client library.
type clientsChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	ids int
}

// clientArm is a client as the report names and shows it.
type clientArm struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// peersDir finds bench/peers, the module lab-clients is built from, by
// walking up from this source file's directory.
func peersDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	for dir := filepath.Dir(file); ok; {
		p := filepath.Join(dir, "bench", "peers")
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("003-clients builds its peer clients (resty, req, fasthttp) from hotpath's source tree, bench/peers, which this binary cannot find: run the lab from a clone (go run ./cmd/hotpath lab)")
}

// buildLabClients builds lab-clients into dir and lists its clients.
func buildLabClients(env *Env, dir string) (bin string, arms []clientArm, err error) {
	src, err := peersDir()
	if err != nil {
		return "", nil, err
	}
	env.progress("building the peer clients (bench/peers/cmd/lab-clients)")
	bin = filepath.Join(dir, "lab-clients")
	cmd := exec.CommandContext(env.ctx(), "go", "build", "-o", bin, "./cmd/lab-clients")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("building bench/peers/cmd/lab-clients (needs the go command): %v\n%s", err, out)
	}
	out, err := exec.CommandContext(env.ctx(), bin, "-list").Output()
	if err != nil {
		return "", nil, fmt.Errorf("lab-clients -list: %w", err)
	}
	if err := json.Unmarshal(out, &arms); err != nil || len(arms) == 0 {
		return "", nil, fmt.Errorf("lab-clients -list: %q: %v", out, err)
	}
	return bin, arms, nil
}

// clientsSpec is lab-clients' -spec: the requests and their answers.
func clientsSpec(base string) string {
	b, _ := json.Marshal(map[string]any{
		"get": base + "/get", "want_get": string(clientsGetBody),
		"post": base + "/post", "post_body": string(clientsPost),
		"headers": base + "/headers", "header_list": clientsHeaders, "want_headers": clientsHeadersWant(),
	})
	return string(b)
}

// startClients starts lab-clients for the client named name.
func startClients(env *Env, bin, name, base string) (*clientsChild, error) {
	cmd := exec.CommandContext(env.ctx(), bin, "-client", name, "-spec", clientsSpec(base))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &clientsChild{cmd: cmd, in: in, out: bufio.NewScanner(out)}, nil
}

// send runs one command and returns the fields of its "ok" answer.
func (c *clientsChild) send(format string, args ...any) ([]string, error) {
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		return nil, fmt.Errorf("lab-clients: %w", err)
	}
	if !c.out.Scan() {
		return nil, fmt.Errorf("lab-clients ended: %v", c.out.Err())
	}
	line := c.out.Text()
	if msg, isErr := strings.CutPrefix(line, "err "); isErr {
		return nil, errors.New(msg)
	}
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != "ok" {
		return nil, fmt.Errorf("lab-clients answered %q", line)
	}
	return f[1:], nil
}

// newClient makes a client with a pool of conns connections and returns
// its ID.
func (c *clientsChild) newClient(conns int) (string, error) {
	c.ids++
	id := strconv.Itoa(c.ids)
	_, err := c.send("new %s %d", id, conns)
	return id, err
}

// sample runs a "time" or "concurrent" command and records its figures.
func (c *clientsChild) sample(a *Arm, format string, args ...any) error {
	f, err := c.send(format, args...)
	if err != nil {
		return err
	}
	if len(f) != 3 {
		return fmt.Errorf("lab-clients: want ns, bytes and allocs, got %q", f)
	}
	for i, m := range microMetrics {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return fmt.Errorf("lab-clients: %w", err)
		}
		a.record(m.Name, v)
	}
	return nil
}

func (c *clientsChild) close() {
	c.in.Close()
	c.cmd.Wait()
}

// startAllClients builds lab-clients and starts one per client.
func startAllClients(env *Env, base string) (arms []clientArm, children []*clientsChild, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "hotpath-lab-clients")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup = func() {
		for _, c := range children {
			c.close()
		}
		os.RemoveAll(dir)
	}
	bin, arms, err := buildLabClients(env, dir)
	if err == nil {
		for _, a := range arms {
			var c *clientsChild
			if c, err = startClients(env, bin, a.Name, base); err != nil {
				break
			}
			children = append(children, c)
		}
	}
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return arms, children, cleanup, nil
}

var (
	clientsGetBody = []byte(`{"message":"Hello, World!","items":[1,2,3,4,5,6,7,8]}`)
	clientsPost    = []byte(`{"user":"ada","email":"ada@example.com","roles":["admin","dev"],"active":true}`)
	clientsHeaders = [][2]string{{"Authorization", "Bearer token-123"}, {"User-Agent", "hotpath-lab/1"}, {"Accept", "application/json"}}
)

// clientsServer answers /get with a JSON body, echoes /post, and answers
// /headers with the three headers' values, so the response proves they
// were sent. It is hotpath's native server: no allocations per request.
func clientsServer(c *server.Ctx) {
	c.SetContentType("application/json")
	switch string(c.Path()) {
	case "/get":
		c.Write(clientsGetBody)
	case "/post":
		var buf [1024]byte
		b, err := c.ReadBody(buf[:0])
		if err != nil {
			c.Error(400, err.Error())
			return
		}
		c.Write(b)
	case "/headers":
		for _, kv := range clientsHeaders {
			c.Write(c.RequestHeader(kv[0]))
			c.Write([]byte("\n"))
		}
	default:
		c.Error(404, "not found\n")
	}
}

func clientsHeadersWant() string {
	var b strings.Builder
	for _, kv := range clientsHeaders {
		b.WriteString(kv[1] + "\n")
	}
	return b.String()
}

// clientScenario is one row of the seed's tables.
type clientScenario struct {
	name    string
	workers int              // 1: sequential; more: the pooled scenario
	kind    string           // lab-clients' request kind: get, post or headers
	claims  map[string]Claim // by client name, vs net/http on ns/op
}

var clientScenarios = []clientScenario{
	{"GET", 1, "get", map[string]Claim{
		"resty v2": {Quote: "38,126 → 41,738 ns/op (0.9×)", Ratio: 38126.0 / 41738},
		"req v3":   {Quote: "38,126 → 45,950 ns/op (0.8×)", Ratio: 38126.0 / 45950},
		"fasthttp": {Quote: "38,126 → 22,799 ns/op (1.7× faster)", Ratio: 38126.0 / 22799}}},
	{"POST JSON", 1, "post", map[string]Claim{
		"resty v2": {Quote: "40,100 → 45,939 ns/op (0.9×)", Ratio: 40100.0 / 45939},
		"req v3":   {Quote: "40,100 → 51,000 ns/op (0.8×)", Ratio: 40100.0 / 51000},
		"fasthttp": {Quote: "40,100 → 21,188 ns/op (1.9× faster)", Ratio: 40100.0 / 21188}}},
	{"pooled", 8, "get", map[string]Claim{
		"resty v2": {Quote: "38,621 → 42,253 ns/op (0.9×)", Ratio: 38621.0 / 42253},
		"fasthttp": {Quote: "38,621 → 19,417 ns/op (2.0× faster)", Ratio: 38621.0 / 19417}}},
	{"headers", 1, "headers", map[string]Claim{
		"resty v2": {Quote: "40,171 → 43,736 ns/op (0.9×)", Ratio: 40171.0 / 43736},
		"fasthttp": {Quote: "40,171 → 19,531 ns/op (2.1× faster)", Ratio: 40171.0 / 19531}}},
}

var peerClients = &Experiment{ID: "003-clients", Seed: "003", Title: "net/http vs resty vs req vs fasthttp vs hotpath clients",
	Check: checkPeerClients, Run: runPeerClients}

func checkPeerClients(env *Env) error {
	h, err := env.startServer("clients-native")
	if err != nil {
		return err
	}
	defer h.Close()
	arms, children, cleanup, err := startAllClients(env, h.URL())
	if err != nil {
		return err
	}
	defer cleanup()
	for i, c := range children {
		for _, sc := range clientScenarios {
			id, err := c.newClient(max(2, sc.workers))
			if err == nil {
				_, err = c.send("call %s %s", id, sc.kind)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", arms[i].Name, sc.name, err)
			}
		}
	}
	return nil
}

func runPeerClients(env *Env) (*Result, error) {
	h, err := env.startServer("clients-native")
	if err != nil {
		return nil, err
	}
	defer h.Close()
	clientArms, children, cleanup, err := startAllClients(env, h.URL())
	if err != nil {
		return nil, err
	}
	defer cleanup()
	r := newResult(microMetrics)
	type armRun struct {
		c  *clientsChild
		id string
		sc clientScenario
		n  int
	}
	runs := map[*Arm]*armRun{}
	names := map[string]map[string]string{} // scenario → client → arm name
	for _, sc := range clientScenarios {
		names[sc.name] = map[string]string{}
		for i, ca := range clientArms {
			code := ""
			if sc.name == "GET" {
				code = ca.Code
			}
			a := newArm(sc.name+" · "+ca.Name, code)
			ar := &armRun{c: children[i], sc: sc}
			if ar.id, err = ar.c.newClient(max(2, sc.workers)); err != nil {
				return nil, fmt.Errorf("%s: %w", a.Name, err)
			}
			if sc.workers == 1 {
				f, err := ar.c.send("calibrate %s %s %s", ar.id, sc.kind, env.Budget.RunTime)
				if err == nil && len(f) == 1 {
					ar.n, err = strconv.Atoi(f[0])
				}
				if err != nil || ar.n < 1 {
					return nil, fmt.Errorf("%s: calibrating: %q %v", a.Name, f, err)
				}
			} else if _, err := ar.c.send("concurrent %s %s %d %s", ar.id, sc.kind, sc.workers, env.Budget.RunTime/2); err != nil {
				return nil, fmt.Errorf("%s: warming up: %w", a.Name, err)
			}
			runs[a] = ar
			names[sc.name][ca.Name] = a.Name
			r.Arms = append(r.Arms, a)
		}
	}
	if err := env.measure(r, func(a *Arm, _ int) error {
		ar := runs[a]
		if ar.sc.workers > 1 {
			return ar.c.sample(a, "concurrent %s %s %d %s", ar.id, ar.sc.kind, ar.sc.workers, env.Budget.RunTime)
		}
		return ar.c.sample(a, "time %s %s %d", ar.id, ar.sc.kind, ar.n)
	}); err != nil {
		return nil, err
	}
	base := clientArms[0].Name
	for _, sc := range clientScenarios {
		for _, ca := range clientArms[1:] {
			cl, ok := sc.claims[ca.Name]
			if !ok {
				cl = Claim{Quote: "not in the seed's table", Info: true}
			}
			r.compare(sc.name+": "+ca.Name, names[sc.name][base], names[sc.name][ca.Name], NsPerOp, cl)
		}
	}
	r.compare("GET allocations: fasthttp", names["GET"][base], names["GET"]["fasthttp"], AllocsPerOp, Claim{Quote: "68 → 1 allocs/op", Ratio: 68})
	r.compare("GET allocations: hotpath client.Transport", names["GET"][base], names["GET"]["hotpath client.Transport"], AllocsPerOp, Claim{Quote: "not in the seed (hotpath's own target: ≤ 15 allocs for the whole Do)", Info: true})
	r.Setup = "each client calls a hotpath native server over plain HTTP/1.1 keep-alive (GET: 52-byte JSON; POST: 80-byte JSON echoed; headers: Authorization, User-Agent, Accept echoed). Sequential calls except \"pooled\": 8 goroutines sharing one client with a pool of ≥ 8 connections. " + h.where() + "; every client runs in its own process (lab-clients, built from bench/peers), so B/op and allocs/op are the client's alone (the seed's net/http figures likely included its in-process server's)."
	r.SameWork = "every client gets the same body in every scenario: the JSON, the echoed POST body, and the three header values echoed by the server (so headers were really sent)."
	r.finish(explain(r, map[outcome]string{
		partlyAsClaimed: "fasthttp's lead is real but its size depends on what is counted; resty and req add their own allocations on top of net/http",
		asClaimed:       "the seed's ranking and ratios hold here",
		notAsClaimed:    "this machine does not see the seed's ratios",
	}))
	return r, nil
}
