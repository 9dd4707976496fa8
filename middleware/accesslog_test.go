package middleware

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink safe for the server goroutines that write it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAccessLogFields(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := RequestID{}.Wrap(AccessLog{Logger: logger}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	})))
	req := httptest.NewRequest("POST", "/pot?x=1", nil)
	req.RemoteAddr = "192.0.2.1:1234"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	recs := logs.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	m := recs[0]
	want := map[string]any{"msg": "http", "method": "POST", "path": "/pot", "status": 418.0,
		"bytes": 15.0, "remote": "192.0.2.1:1234", "request_id": rec.Header().Get(RequestIDHeader)}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if _, ok := m["dur"]; !ok {
		t.Error("no dur")
	}
	if _, ok := m["body"]; ok {
		t.Error("body logged without BodySampleEvery")
	}
}

func TestAccessLogImplicitStatusAndSampling(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := AccessLog{Logger: logger, BodySampleEvery: 2, BodySampleBytes: 5}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	for i := range 4 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PUT", "/", strings.NewReader(fmt.Sprint("body-", i))))
	}
	recs := logs.records(t)
	var bodies []any
	for _, m := range recs {
		if m["status"] != 200.0 || m["bytes"] != 0.0 {
			t.Errorf("status %v bytes %v, want 200 and 0 for a handler that wrote nothing", m["status"], m["bytes"])
		}
		bodies = append(bodies, m["body"])
	}
	if fmt.Sprint(bodies) != "[<nil> body- <nil> body-]" {
		t.Errorf("bodies = %v, want every second one, capped at 5 bytes", bodies)
	}
}

// TestAccessLogSampleBytesDefault: with BodySampleEvery set and
// BodySampleBytes left 0, a sampled body is logged up to 4 KiB.
func TestAccessLogSampleBytesDefault(t *testing.T) {
	var logs syncBuffer
	h := AccessLog{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), BodySampleEvery: 1}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PUT", "/", strings.NewReader(strings.Repeat("b", 5<<10))))
	recs := logs.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	if body, _ := recs[0]["body"].(string); len(body) != 4<<10 {
		t.Errorf("logged %d bytes of the body, want 4096", len(body))
	}
}

func TestAccessLogDisabledLevel(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var got http.ResponseWriter
	h := AccessLog{Logger: logger}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = w }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if got != rec || len(logs.records(t)) != 0 {
		t.Fatal("a disabled level still wraps or logs")
	}
}

// An SSE handler behind AccessLog must reach the client event by event:
// the client acknowledges each event before the handler sends the next,
// so a wrapper that hid Flush would deadlock (caught by the timeout).
func TestAccessLogFlushesSSE(t *testing.T) {
	var logs syncBuffer
	acks := make(chan struct{})
	h := AccessLog{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f, ok := w.(http.Flusher)
		if !ok {
			t.Error("wrapper is not an http.Flusher")
			return
		}
		for i := range 3 {
			fmt.Fprintf(w, "data: event %d\n\n", i)
			f.Flush()
			select {
			case <-acks:
			case <-time.After(5 * time.Second):
				t.Error("client never saw the event: Flush did not pass through")
				return
			}
		}
	}))
	engines(t, h, func(t *testing.T, base string) {
		resp, err := http.Get(base + "/events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for i := range 3 {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("data: event %d\n", i); line != want {
				t.Fatalf("line %q, want %q", line, want)
			}
			br.ReadString('\n') // the blank line
			acks <- struct{}{}
		}
	})
}

func TestAccessLogHijack(t *testing.T) {
	var logs syncBuffer
	h := AccessLog{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo: " + line)
		brw.Flush()
	}))
	engines(t, h, func(t *testing.T, base string) {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 101 {
			t.Fatalf("response %v, %v; want 101", resp, err)
		}
		io.WriteString(c, "hello\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "echo: hello\n" {
			t.Fatalf("read %q, %v", line, err)
		}
	})
	// Wait for the two log records (the handler logs after it returns).
	deadline := time.Now().Add(5 * time.Second)
	for len(logs.records(t)) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, m := range logs.records(t) {
		if m["hijacked"] != true {
			t.Errorf("record %v: want hijacked=true", m)
		}
	}
}

// http.ResponseController reaches the server's writer through Unwrap, and
// io.Copy keeps the server's ReadFrom.
func TestAccessLogResponseControllerAndReadFrom(t *testing.T) {
	var logs syncBuffer
	payload := strings.Repeat("x", 100<<10)
	h := AccessLog{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Errorf("SetWriteDeadline through the wrapper: %v", err)
		}
		if _, ok := w.(io.ReaderFrom); !ok {
			t.Error("wrapper is not an io.ReaderFrom")
		}
		io.Copy(w, strings.NewReader(payload))
	}))
	engines(t, h, func(t *testing.T, base string) {
		resp, err := http.Get(base)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(b) != len(payload) {
			t.Fatalf("got %d bytes, want %d", len(b), len(payload))
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for len(logs.records(t)) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, m := range logs.records(t) {
		if m["bytes"] != float64(len(payload)) {
			t.Errorf("bytes = %v, want %d", m["bytes"], len(payload))
		}
	}
}

// dumpRequestLog is the "before" of seed 000, exercise 11.
func dumpRequestLog(l *log.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dump, err := httputil.DumpRequest(r, true)
		if err == nil {
			l.Printf("req:\n%s", dump)
		}
		h.ServeHTTP(w, r)
	})
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("ok"))
})

func benchHandler(b *testing.B, h http.Handler, body string) {
	req := httptest.NewRequest("POST", "/api/items/42", nil)
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Content-Type", "application/json")
	w := &discardWriter{h: http.Header{}}
	rd := strings.NewReader(body)
	req.Body = io.NopCloser(rd)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		h.ServeHTTP(w, req)
	}
}

var benchBody = strings.Repeat(`{"k":"v"},`, 100) // 1 KB

// BenchmarkDumpRequestLog is the catalog's "before": httputil.DumpRequest
// and log.Printf, to io.Discard.
func BenchmarkDumpRequestLog(b *testing.B) {
	benchHandler(b, dumpRequestLog(log.New(io.Discard, "", log.LstdFlags), okHandler), benchBody)
}

// BenchmarkAccessLog is AccessLog with a JSON slog handler, to io.Discard.
func BenchmarkAccessLog(b *testing.B) {
	benchHandler(b, AccessLog{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}.Wrap(okHandler), benchBody)
}
