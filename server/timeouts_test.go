package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"
)

// The server's timeouts: the defaults that stop slow clients (the stall
// timeouts, which count time without progress), net/http's absolute
// ones when the user sets them, and the deadlines a handler sets for its
// own request.

// TestNoAbsoluteTimeoutsByDefault: like net/http, a zero Server has
// no ReadTimeout or WriteTimeout cutting long transfers; the stall
// timeouts and the header and idle timeouts protect it.
func TestNoAbsoluteTimeoutsByDefault(t *testing.T) {
	s := &Server{Handler: http.NotFoundHandler()}
	s.resolve()
	if s.cfg.readTimeout != 0 || s.cfg.writeTimeout != 0 {
		t.Fatalf("absolute timeouts by default: read %v write %v", s.cfg.readTimeout, s.cfg.writeTimeout)
	}
	if s.cfg.readStall != DefaultReadStallTimeout || s.cfg.writeStall != DefaultWriteStallTimeout ||
		s.cfg.readHeaderTimeout != DefaultReadHeaderTimeout || s.cfg.idleTimeout != DefaultIdleTimeout {
		t.Fatalf("protective defaults missing: %+v", s.cfg)
	}
}

// TestSilentConnectionCutAtReadHeaderTimeout: a client that connects
// and sends nothing is closed after ReadHeaderTimeout, not IdleTimeout.
//
// Modes: HTTP/1.1, both APIs, raw socket: a connection that sends nothing
// is no protocol yet (h2c's held preface: TestAttack2026H2CPrefaceHold).
func TestSilentConnectionCutAtReadHeaderTimeout(t *testing.T) {
	const rht = 300 * time.Millisecond
	for _, name := range []string{"native", "handler"} {
		s := &Server{ReadHeaderTimeout: rht, IdleTimeout: time.Minute, ErrorLog: discardLog}
		if name == "native" {
			s.Native = func(c *Ctx) {}
		} else {
			s.Handler = http.NotFoundHandler()
		}
		nc := dial(t, startServer(t, s))
		start := time.Now()
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := nc.Read(make([]byte, 1))
		if took := time.Since(start); err != io.EOF || took < rht-50*time.Millisecond || took > rht+time.Second {
			t.Fatalf("%s: silent connection: %v after %v, want EOF after %v", name, err, took, rht)
		}
	}
}

// TestAbsoluteWriteTimeout: a WriteTimeout the user sets means what it
// means on net/http: the whole response, moving or not. A 1 s event
// stream under a 150 ms WriteTimeout never reads as complete, on every
// mode and both APIs (HTTP/1.1 cuts the connection, HTTP/2 the stream).
func TestAbsoluteWriteTimeout(t *testing.T) {
	const events = 40 // 25 ms apart
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // the cut comes long before the stream could end, however loaded
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			for i := range events {
				if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
					return
				}
				if rc.Flush() != nil {
					return
				}
				time.Sleep(25 * time.Millisecond)
			}
		})
		nh := func(c *Ctx) {
			for i := range events {
				if _, err := fmt.Fprintf(c, "data: %d\n\n", i); err != nil {
					return
				}
				if c.Flush() != nil {
					return
				}
				time.Sleep(25 * time.Millisecond)
			}
		}
		base, c := m.serve(t, &Server{WriteTimeout: 150 * time.Millisecond}, h, nh)
		resp, err := c.Get(base + "/")
		if err != nil {
			return // cut before the head: not complete either
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil || strings.Contains(string(b), fmt.Sprintf("data: %d\n", events-1)) {
			t.Fatalf("WriteTimeout did not cut a 1 s stream: %v, %d bytes", err, len(b))
		}
	})
}

// TestHandlerDeadlinesEndWithTheRequest: deadlines a handler sets
// (http.ResponseController's read and write deadlines; the native API's
// Ctx.SetWriteDeadline, the one it has) replace the server's timeouts for
// its own request only, even with every server timeout turned off: once
// they have passed, the next request on the same connection, with a body,
// is served whole. On every mode and both APIs.
func TestHandlerDeadlinesEndWithTheRequest(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // the test waits for the deadlines to pass, however long that takes
		deadlines := make(chan time.Time, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/set" {
				dl := time.Now().Add(20 * time.Millisecond)
				rc := http.NewResponseController(w)
				if err := rc.SetWriteDeadline(dl); err != nil {
					t.Errorf("SetWriteDeadline: %v", err)
				}
				if err := rc.SetReadDeadline(dl); err != nil {
					t.Errorf("SetReadDeadline: %v", err)
				}
				deadlines <- dl
				io.WriteString(w, "set")
				return
			}
			b, err := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %v", b, err)
		})
		nh := func(c *Ctx) {
			if string(c.Path()) == "/set" {
				dl := time.Now().Add(20 * time.Millisecond)
				if err := c.SetWriteDeadline(dl); err != nil {
					t.Errorf("SetWriteDeadline: %v", err)
				}
				deadlines <- dl
				c.WriteString("set")
				return
			}
			b, err := c.ReadBody(nil)
			fmt.Fprintf(c, "%s %v", b, err)
		}
		s := &Server{IdleTimeout: -1, ReadStallTimeout: -1, WriteStallTimeout: -1}
		base, c := m.serve(t, s, h, nh)
		var first, next string
		trace := func(local *string) context.Context {
			return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				GotConn: func(ci httptrace.GotConnInfo) { *local = ci.Conn.LocalAddr().String() },
			})
		}
		req, _ := http.NewRequestWithContext(trace(&first), "GET", base+"/set", nil)
		if _, body := mustDo(t, c, req); string(body) != "set" {
			t.Fatalf("/set: %q", body)
		}
		// Both deadlines pass with the connection idle.
		time.Sleep(time.Until((<-deadlines).Add(50 * time.Millisecond)))
		req, _ = http.NewRequestWithContext(trace(&next), "POST", base+"/next", strings.NewReader("hi"))
		if resp, body := mustDo(t, c, req); resp.StatusCode != 200 || string(body) != "hi <nil>" {
			t.Fatalf("next request: %d %q", resp.StatusCode, body)
		}
		if next != first {
			t.Errorf("the next request went on a new connection (%s, first %s): the deadlines ended the one they were set on", next, first)
		}
	})
}

// TestStallTimeoutsKeepHealthyStreams: the defaults that stop slow
// clients count time without progress, so a stream that keeps moving
// outlives them: an event stream, a slow upload (chunked, and with a
// declared length), each three stall periods long, and a handler that
// thinks for three periods before it answers (twice on one connection:
// the second finds the deadlines of the first long past), all complete.
// On every mode and both APIs.
func TestStallTimeoutsKeepHealthyStreams(t *testing.T) {
	// A gap of a 25th of the period: a goroutine of this test scheduled
	// late (by up to the period less the deadlines' renewal slack of an
	// eighth, 437 ms) still moves in time on a loaded machine.
	const stall = 500 * time.Millisecond
	const gap = stall / 25 // between the events, and the upload's pieces
	const pieces = 75      // 75 gaps: three stall periods
	runModes(t, func(t *testing.T, m mode) {
		// Parallel: the streams move every tenth of a stall period, a
		// margin that the other modes' few small writes do not eat.
		t.Parallel()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/events":
				w.Header().Set("Content-Type", "text/event-stream")
				for i := range pieces {
					fmt.Fprintf(w, "data: %d\n\n", i)
					w.(http.Flusher).Flush()
					time.Sleep(gap)
				}
			case "/upload":
				n, err := io.Copy(io.Discard, r.Body)
				fmt.Fprintf(w, "%d %v", n, err)
			case "/slow":
				time.Sleep(3 * stall)
				io.WriteString(w, strings.Repeat("s", 100))
			}
		})
		nh := func(c *Ctx) {
			switch string(c.Path()) {
			case "/events":
				c.SetContentType("text/event-stream")
				for i := range pieces {
					fmt.Fprintf(c, "data: %d\n\n", i)
					c.Flush()
					time.Sleep(gap)
				}
			case "/upload":
				n, err := io.Copy(io.Discard, c.Body())
				fmt.Fprintf(c, "%d %v", n, err)
			case "/slow":
				time.Sleep(3 * stall)
				c.WriteString(strings.Repeat("s", 100))
			}
		}
		base, c := m.serve(t, &Server{ReadStallTimeout: stall, WriteStallTimeout: stall}, h, nh)
		// The slow handler on a client of its own, so that its second
		// request finds the first one's connection idle.
		slowClient := &http.Client{Transport: c.Transport.(*http.Transport).Clone()}
		t.Cleanup(slowClient.CloseIdleConnections)
		// do sends req and reads the whole response, off the test's
		// goroutine (no t.Fatal).
		do := func(c *http.Client, req *http.Request) (string, error) {
			resp, err := c.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			if (resp.ProtoMajor == 2) != m.isH2() {
				return "", fmt.Errorf("served over %s", resp.Proto)
			}
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		}
		slow, events := mustRequest(t, "GET", base+"/slow"), mustRequest(t, "GET", base+"/events")
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range 2 {
				body, err := do(slowClient, slow)
				if err != nil || len(body) != 100 {
					t.Errorf("slow handler's response %d: %v, %d bytes", i, err, len(body))
				}
			}
		})
		wg.Go(func() {
			body, err := do(c, events)
			if err != nil || !strings.Contains(body, fmt.Sprintf("data: %d\n", pieces-1)) {
				t.Errorf("event stream cut: %v after %d bytes", err, len(body))
			}
		})
		for _, declared := range []bool{false, true} { // chunked, and a Content-Length
			pr, pw := io.Pipe()
			req := mustRequest(t, "POST", base+"/upload")
			req.Body = pr
			if declared {
				req.ContentLength = pieces * 1000
			}
			wg.Go(func() {
				go func() {
					for range pieces {
						pw.Write(make([]byte, 1000))
						time.Sleep(gap)
					}
					pw.Close()
				}()
				if body, err := do(c, req); err != nil || body != fmt.Sprint(pieces*1000, " <nil>") {
					t.Errorf("slow upload (declared length %v): %v %q", declared, err, body)
				}
			})
		}
		wg.Wait()
	})
}

// TestStallTimeoutsStopStalledClients: a client that stops reading the
// response, and one that stops sending its body, are cut (HTTP/1.1: the
// connection; HTTP/2: the stream), on every mode and both APIs: the
// handler's write, and its body read, fail.
func TestStallTimeoutsStopStalledClients(t *testing.T) {
	const stall = 200 * time.Millisecond
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // cut within 10 s: no tight timing
		wrote := make(chan error, 1)
		readErr := make(chan error, 1)
		h := stallProbe(wrote, readErr)
		nh := func(c *Ctx) {
			switch string(c.Path()) {
			case "/download":
				chunk := make([]byte, 64<<10)
				var err error
				for i := 0; i < 4000 && err == nil; i++ {
					_, err = c.Write(chunk)
				}
				wrote <- err
			case "/upload":
				_, err := io.Copy(io.Discard, c.Body())
				readErr <- err
			}
		}
		base, c := m.serve(t, &Server{ReadStallTimeout: stall, WriteStallTimeout: stall}, h, nh)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/download", nil)
		resp, err := c.Do(req) // its body is never read
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })

		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/upload", pr)
		req.ContentLength = 100000
		go func() {
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		pw.Write([]byte("partial"))
		expectCut(t, wrote, "a client that never reads took 256 MB", "a client that stopped reading was not cut")
		expectCut(t, readErr, "a stalled upload read as complete", "a client that stopped sending was not cut")
	})
}

// expectCut waits for the error that ended a stallProbe transfer: it
// must come within 10 s and not be nil.
func expectCut(t *testing.T, ended <-chan error, completedMsg, notCutMsg string) {
	t.Helper()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal(completedMsg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(notCutMsg)
	}
}

// stallProbe serves /download, 256 MB (far more than socket buffers
// hold), and /upload, which reads the whole body; each reports the error
// that ended it.
func stallProbe(wrote, read chan<- error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/download":
			chunk := make([]byte, 64<<10)
			var err error
			for i := 0; i < 4000 && err == nil; i++ {
				_, err = w.Write(chunk)
			}
			wrote <- err
		case "/upload":
			_, err := io.Copy(io.Discard, r.Body)
			read <- err
		}
	}
}
