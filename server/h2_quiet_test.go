package server

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// theH2Conn returns s's one connection on its HTTP/2 engine.
func theH2Conn(t *testing.T, s *Server) *h2Conn {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.h2conns) != 1 {
		t.Fatalf("%d HTTP/2 connections, want 1", len(s.h2conns))
	}
	for sc := range s.h2conns {
		return sc
	}
	return nil
}

// A connection whose one open stream is long-lived and quiet (an event
// stream) gives its read buffer back once nothing came for a second, and
// keeps the stream: a new request on the connection is answered (the
// buffer taken again), an upload that pauses longer than that mid-body
// arrives whole, and the event stream ends as its handler ends it.
//
// Modes: h2 and h2c on hotpath's HTTP/2 engine, both APIs (the reader is
// the engine's; the hand-off's is net/http's).
func TestH2QuietStreamGivesReadBufferBack(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // mostly waiting for quiet spells
		release := make(chan struct{})
		t.Cleanup(func() {
			select {
			case <-release:
			default:
				close(release)
			}
		})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/events":
				io.WriteString(w, "first\n")
				w.(http.Flusher).Flush()
				<-release
				io.WriteString(w, "last\n")
			case "/upload":
				sum := sha256.New()
				n, err := io.Copy(sum, r.Body)
				fmt.Fprintf(w, "%d %x %v", n, sum.Sum(nil), err)
			default:
				io.WriteString(w, "hello")
			}
		})
		nh := func(x *Ctx) {
			switch string(x.Path()) {
			case "/events":
				x.WriteString("first\n")
				x.Flush()
				<-release
				x.WriteString("last\n")
			case "/upload":
				sum := sha256.New()
				n, err := io.Copy(sum, x.Body())
				fmt.Fprintf(x, "%d %x %v", n, sum.Sum(nil), err)
			default:
				x.WriteString("hello")
			}
		}
		s := &Server{}
		base, c := m.serve(t, s, h, nh)
		events, er := openEventStream(t, c, base)
		defer events.Body.Close()
		sc := theH2Conn(t, s)
		waitFor(t, "the quiet reader to give its buffer back", sc.noReadBuf.Load)
		waitFor(t, "the quiet connection to leave the sweep's lists", func() bool { return sweepMembers(s) == 0 })

		get := func(path string) string {
			t.Helper()
			resp, err := c.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %q, %v", path, resp.StatusCode, b, err)
			}
			return string(b)
		}
		if b := get("/hello"); b != "hello" {
			t.Fatalf("GET /hello after the quiet spell: %q", b)
		}

		// An upload that stops mid-body until the reader has given its
		// buffer back, then goes on.
		part := []byte(strings.Repeat("0123456789abcdef", 64<<10/16))
		pr, pw := io.Pipe()
		go func() {
			pw.Write(part)
			for !sc.noReadBuf.Load() {
				if !eventually(sc.noReadBuf.Load) {
					pw.CloseWithError(fmt.Errorf("the reader kept its buffer through the pause"))
					return
				}
			}
			pw.Write(part)
			pw.Close()
		}()
		resp, err := c.Post(base+"/upload", "application/octet-stream", pr)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		whole := sha256.Sum256(append(append([]byte(nil), part...), part...))
		if want := fmt.Sprintf("%d %x <nil>", 2*len(part), whole); string(b) != want || err != nil {
			t.Fatalf("upload with a quiet spell: %q, %v; want %q", b, err, want)
		}
		if sc2 := theH2Conn(t, s); sc2 != sc {
			t.Fatalf("the requests went over another connection")
		}

		close(release)
		rest, err := io.ReadAll(er)
		if string(rest) != "last\n" || err != nil {
			t.Fatalf("the event stream's end: %q, %v", rest, err)
		}
	}, h2EngineModes()...)
}
