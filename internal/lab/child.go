package lab

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// ChildEnv is the environment variable that turns a process started from
// the lab's binary into one of the lab's servers: when it is set, the
// binary must call ServeChild with its value (cmd/hotpath's lab command
// and the lab's tests do).
const ChildEnv = "HOTPATH_LAB_CHILD"

// serverSpec starts one kind of lab server on ln and returns the
// certificate clients must trust (nil for plain HTTP) and a stop function.
type serverSpec func(ln net.Listener) (cert *x509.Certificate, stop func(), err error)

// serverStats is a server process's CPU time and allocation counters.
type serverStats struct {
	CPU     time.Duration
	Mallocs uint64
	Bytes   uint64
}

// parallelKinds run on every CPU: with one P, sync.Pool's Get and Put can
// never contend, and 001-pool tests a contention claim.
var parallelKinds = map[string]bool{"mini-pool": true, "mini-perconn": true}

func readStats() serverStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return serverStats{CPU: processCPU(), Mallocs: m.Mallocs, Bytes: m.TotalAlloc}
}

// ServeChild serves the lab server named kind on 127.0.0.1. It writes
// "ready ADDR CERT" to out (CERT is the base64 DER certificate, or "-"),
// answers each "stats" line read from in with "stats CPU_NS MALLOCS
// BYTES", and returns when in is closed. Where the machine has two CPUs or
// more, it runs with GOMAXPROCS=1 pinned to CPU 0, as the GUIDE measures,
// except the kinds in parallelKinds, which need every CPU.
func ServeChild(kind string, in io.Reader, out io.Writer) error {
	spec, ok := serverKinds[kind]
	if !ok {
		return fmt.Errorf("lab: unknown child server kind %q", kind)
	}
	if runtime.NumCPU() >= 2 && !parallelKinds[kind] {
		runtime.GOMAXPROCS(1)
		pinToCPU(0)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cert, stop, err := spec(ln)
	if err != nil {
		return err
	}
	defer stop()
	c := "-"
	if cert != nil {
		c = base64.StdEncoding.EncodeToString(cert.Raw)
	}
	fmt.Fprintf(out, "ready %s %s\n", ln.Addr(), c)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() == "stats" {
			s := readStats()
			fmt.Fprintf(out, "stats %d %d %d\n", s.CPU.Nanoseconds(), s.Mallocs, s.Bytes)
		}
	}
	return nil
}

// serverHandle is a running lab server, in a child process or in-process.
type serverHandle struct {
	Addr string
	// TLS trusts the server's certificate; nil for plain HTTP.
	TLS *tls.Config
	// Child is true when the server runs in its own process: its stats
	// are then the server's alone.
	Child bool
	// Parallel is true for a child that runs on every CPU (parallelKinds).
	Parallel bool

	mu    sync.Mutex
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	stop  func()
	close sync.Once
}

// URL returns the server's base URL ("http://127.0.0.1:port").
func (h *serverHandle) URL() string {
	if h.TLS != nil {
		return "https://" + h.Addr
	}
	return "http://" + h.Addr
}

// where describes where the server runs, for Setup texts.
func (h *serverHandle) where() string {
	if h.Child && h.Parallel {
		return "server in a child process on every CPU, so its CPU and allocations stay out of the client's figures"
	}
	if h.Child {
		return "server in a child process (GOMAXPROCS=1, pinned to CPU 0 where possible), so its CPU and allocations stay out of the client's figures"
	}
	return "server in the same process (no child command): server CPU and allocation figures are process-wide and include the client"
}

// startServer starts the lab server kind: as a child process when
// env.ChildCmd is set, in-process otherwise.
func (env *Env) startServer(kind string) (*serverHandle, error) {
	spec, ok := serverKinds[kind]
	if !ok {
		return nil, fmt.Errorf("lab: unknown server kind %q", kind)
	}
	if len(env.ChildCmd) == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		cert, stop, err := spec(ln)
		if err != nil {
			ln.Close()
			return nil, err
		}
		return &serverHandle{Addr: ln.Addr().String(), TLS: trust(cert), stop: stop}, nil
	}
	cmd := exec.CommandContext(env.ctx(), env.ChildCmd[0], env.ChildCmd[1:]...)
	cmd.Env = append(os.Environ(), ChildEnv+"="+kind)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lab: starting child server %s: %w", kind, err)
	}
	h := &serverHandle{Child: true, Parallel: parallelKinds[kind], cmd: cmd, in: in, out: bufio.NewReader(outp)}
	line, err := h.readLine(10 * time.Second)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("lab: child server %s did not start: %w", kind, err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ready" {
		h.Close()
		return nil, fmt.Errorf("lab: child server %s said %q, want \"ready ADDR CERT\"", kind, line)
	}
	h.Addr = f[1]
	if f[2] != "-" {
		der, err := base64.StdEncoding.DecodeString(f[2])
		if err != nil {
			h.Close()
			return nil, err
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			h.Close()
			return nil, err
		}
		h.TLS = trust(cert)
	}
	return h, nil
}

func trust(cert *x509.Certificate) *tls.Config {
	if cert == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{RootCAs: pool, ServerName: "example.com"}
}

func (h *serverHandle) readLine(timeout time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := h.out.ReadString('\n')
		ch <- res{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-time.After(timeout):
		return "", errors.New("timed out")
	}
}

// Stats returns the server's CPU time and allocation counters.
func (h *serverHandle) Stats() (serverStats, error) {
	if !h.Child {
		return readStats(), nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := io.WriteString(h.in, "stats\n"); err != nil {
		return serverStats{}, err
	}
	line, err := h.readLine(10 * time.Second)
	if err != nil {
		return serverStats{}, err
	}
	var s serverStats
	var cpu int64
	if _, err := fmt.Sscanf(line, "stats %d %d %d", &cpu, &s.Mallocs, &s.Bytes); err != nil {
		return serverStats{}, fmt.Errorf("lab: child stats %q: %w", line, err)
	}
	s.CPU = time.Duration(cpu)
	return s, nil
}

// Close stops the server.
func (h *serverHandle) Close() {
	h.close.Do(func() {
		if h.stop != nil {
			h.stop()
		}
		if h.cmd != nil {
			h.in.Close()
			done := make(chan struct{})
			go func() { h.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				h.cmd.Process.Kill()
				<-done
			}
		}
	})
}
