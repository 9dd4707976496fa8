package lab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"
)

// Seed 000, exercise 13: slowloris against a server without
// ReadHeaderTimeout vs one with it.

// slowloris holds n connections that send a request head one byte at a
// time and never finish it. It does not reconnect: a closed connection
// is what the timeout achieves.
type slowloris struct {
	conns []net.Conn
	stop  chan struct{}
	wg    sync.WaitGroup
}

func startSlowloris(addr string, n int, every time.Duration) (*slowloris, error) {
	s := &slowloris{stop: make(chan struct{})}
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("slowloris dial: %w", err)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: "))
		s.conns = append(s.conns, c)
	}
	s.wg.Add(1)
	go func() { // one goroutine trickles a byte to every connection
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				for _, c := range s.conns {
					c.SetWriteDeadline(time.Now().Add(time.Millisecond))
					c.Write([]byte("a"))
				}
			}
		}
	}()
	return s, nil
}

func (s *slowloris) Close() {
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
	}
	for _, c := range s.conns {
		c.Close()
	}
}

var slowlorisGuard = &Experiment{ID: "000-13", Seed: "000", Title: "slowloris with and without ReadHeaderTimeout",
	Check: checkSlowlorisGuard, Run: runSlowlorisGuard}

const slowlorisTimeout = 100 * time.Millisecond // the seed's 5 s, scaled down so a run is short

// slowlorisServers configures the server without and with the timeout.
var slowlorisServers = map[bool]func(*http.Server){
	false: nil,
	true:  func(s *http.Server) { s.ReadHeaderTimeout = slowlorisTimeout },
}

// slowlorisRound runs one round: it starts a server, attacks it with n
// slow connections, waits 3× the timeout, counts the server's goroutines,
// then measures legitimate throughput from 4 keep-alive connections.
func slowlorisRound(ctx context.Context, withTimeout bool, n int, d time.Duration) (goroutines, rps float64, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	_, stop, _ := netHTTP(http.HandlerFunc(helloHandler), slowlorisServers[withTimeout])(ln)
	defer stop()
	time.Sleep(5 * time.Millisecond)
	g0 := runtime.NumGoroutine()
	sl, err := startSlowloris(ln.Addr().String(), n, 20*time.Millisecond)
	if err != nil {
		return 0, 0, err
	}
	defer sl.Close()
	time.Sleep(3 * slowlorisTimeout)
	goroutines = float64(max(0, runtime.NumGoroutine()-g0-1)) // -1: the trickler
	res, err := drive(ctx, ln.Addr().String(), "/", 4, d, nil)
	if err != nil {
		return 0, 0, err
	}
	return goroutines, res.ReqPerS, nil
}

func checkSlowlorisGuard(env *Env) error {
	for _, wt := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		var body []byte
		_, stop, _ := netHTTP(http.HandlerFunc(helloHandler), slowlorisServers[wt])(ln)
		_, err = drive(env.ctx(), ln.Addr().String(), "/", 1, 20*time.Millisecond, func(b []byte) { body = append(body[:0], b...) })
		stop()
		if err != nil {
			return err
		}
		if string(body) != string(hello) {
			return fmt.Errorf("body %q", body)
		}
	}
	return nil
}

func runSlowlorisGuard(env *Env) (*Result, error) {
	n := env.Budget.N(1000, 10)
	before := newArm("no ReadHeaderTimeout", "srv := &http.Server{Addr: \":8080\", Handler: mux}")
	after := newArm("ReadHeaderTimeout set", "srv := &http.Server{\n\tAddr: \":8080\", Handler: mux,\n\tReadHeaderTimeout: 5 * time.Second, // 100 ms in the lab\n}")
	r := newResult([]Metric{ReqPerSec, Goroutines}, before, after)
	if err := env.measure(r, func(a *Arm, _ int) error {
		g, rps, err := slowlorisRound(env.ctx(), a == after, n, max(env.Budget.RunTime*2, 50*time.Millisecond))
		if err != nil {
			return err
		}
		a.record(Goroutines.Name, g)
		a.record(ReqPerSec.Name, rps)
		return nil
	}); err != nil {
		return nil, err
	}
	r.Setup = fmt.Sprintf("net/http server in this process; %d slowloris connections trickle one header byte every 20 ms and never finish; ReadHeaderTimeout is 100 ms (the seed's 5 s scaled down); after 3× the timeout the server's goroutines are counted and 4 legitimate keep-alive connections measure throughput.", n)
	r.SameWork = "both servers answer the same body to the legitimate client."
	r.compare("server goroutines", before.Name, after.Name, Goroutines, Claim{Quote: "10k cheap connections eat 10k goroutines; the timeout closes them", Ratio: 0})
	r.compare("legitimate throughput", before.Name, after.Name, ReqPerSec, Claim{Quote: "\"legitimate traffic unaffected\" (the seed's 8.4 s → 620 µs/op, ~13500× \"lower attack throughput\", times its simulated attack, which has no counterpart to measure here)", Ratio: 1, Same: true})
	r.finish(explain(r, map[outcome]string{
		partlyAsClaimed: "the timeout frees the goroutines and buffers that slow connections hold, as claimed; legitimate throughput is not what it was claimed to be",
		asClaimed:       "the timeout frees the goroutines and buffers that slow connections hold, and legitimate traffic is unaffected, as claimed (net/http serves each connection on its own goroutine, so slow ones never blocked the others: the attack costs memory and file descriptors)",
		notAsClaimed:    "this machine does not see the claimed effect",
	}))
	return r, nil
}
