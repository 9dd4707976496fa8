// Package endpoints holds the demo endpoints of `hotpath serve`, written
// once for hotpath's native API and once as an http.Handler, so the same
// requests can be compared across engines (and by the lab).
//
//	/            "Hello, World!" as text/plain
//	/json        {"message":"Hello, World!"}
//	/bytes/{n}   n bytes of body (seed 002's server), up to MaxBytes
//	/stream/{n}  n bytes copied with io.Copy from a reader that is not a
//	             file (a generated or proxied body), up to MaxBytes
//	/echo        the request body, echoed back
//	/discard     reads the request body and answers its length
//	/delay/{ms}  "Hello, World!" after ms milliseconds, up to MaxDelay
//	/goroutines  the server's goroutine count (runtime.NumGoroutine),
//	             for benches that watch a server under attack
//	/events/{s}  server-sent events: "data: {i}" every second for s
//	             seconds, up to MaxEvents, each flushed; ends early when
//	             the client goes (a long-lived, well-behaved stream)
//	/ws          a WebSocket echo, text and binary, on the event API
//	             (ws.go)
package endpoints

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// Limits on what a request may ask of the demo server.
const (
	MaxBytes = 1 << 30
	MaxDelay = 60 * time.Second
	// MaxEvents bounds the seconds /events/{s} streams for.
	MaxEvents = 3600
)

// eventEvery is the period of /events/{s}.
const eventEvery = time.Second

var (
	hello     = []byte("Hello, World!")
	helloJSON = []byte(`{"message":"Hello, World!"}`)
	filler    = bytes.Repeat([]byte("hotpath-"), 4096) // 32 KiB
)

const (
	textPlain = "text/plain; charset=utf-8"
	appJSON   = "application/json"
)

// parseSuffix returns the decimal number after prefix in path.
func parseSuffix(path, prefix string, limit int64) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(path, prefix), 10, 64)
	return n, err == nil && n >= 0 && n <= limit
}

// Native serves the endpoints with hotpath's native API.
func Native(c *server.Ctx) {
	path := c.Path()
	switch {
	case string(path) == "/":
		c.SetContentType(textPlain)
		c.Write(hello)
	case string(path) == "/json":
		c.SetContentType(appJSON)
		c.Write(helloJSON)
	case bytes.HasPrefix(path, []byte("/bytes/")), bytes.HasPrefix(path, []byte("/stream/")):
		prefix := "/bytes/"
		if path[1] == 's' {
			prefix = "/stream/"
		}
		n, ok := parseSuffix(string(path), prefix, MaxBytes)
		if !ok {
			c.Error(http.StatusBadRequest, "want "+prefix+"{n} with 0 ≤ n ≤ 1 GiB\n")
			return
		}
		c.SetContentType("application/octet-stream")
		c.SetContentLength(n)
		sendFiller(c, n, prefix == "/stream/")
	case string(path) == "/echo":
		if cl := c.RequestContentLength(); cl >= 0 {
			c.SetContentLength(cl)
		}
		if ct := c.RequestHeader("Content-Type"); ct != nil {
			c.SetHeaderBytes("Content-Type", ct)
		}
		var buf [4096]byte
		if _, err := io.CopyBuffer(c, c.Body(), buf[:]); err != nil {
			c.Error(http.StatusBadRequest, err.Error()+"\n")
		}
	case string(path) == "/discard":
		var buf [32 << 10]byte
		n, err := io.CopyBuffer(io.Discard, c.Body(), buf[:])
		if err != nil {
			return // the server answers a body over its limit
		}
		c.SetContentType(textPlain)
		c.WriteString(strconv.FormatInt(n, 10))
	case bytes.HasPrefix(path, []byte("/delay/")):
		ms, ok := parseSuffix(string(path), "/delay/", MaxDelay.Milliseconds())
		if !ok {
			c.Error(http.StatusBadRequest, "want /delay/{ms} with 0 ≤ ms ≤ 60000\n")
			return
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		c.SetContentType(textPlain)
		c.Write(hello)
	case string(path) == "/ws":
		nativeWS(c)
	case string(path) == "/goroutines":
		c.SetContentType(textPlain)
		c.WriteString(strconv.Itoa(runtime.NumGoroutine()))
	case bytes.HasPrefix(path, []byte("/events/")):
		n, ok := parseSuffix(string(path), "/events/", MaxEvents)
		if !ok {
			c.Error(http.StatusBadRequest, "want /events/{s} with 0 ≤ s ≤ 3600\n")
			return
		}
		c.SetContentType("text/event-stream")
		sendEvents(c, n, c.Flush, nil)
	default:
		c.Error(http.StatusNotFound, "404 page not found\n")
	}
}

// sendEvents writes n server-sent events, one every eventEvery, flushing
// each, until a write or flush fails or done (if not nil) is closed.
func sendEvents(w io.Writer, n int64, flush func() error, done <-chan struct{}) {
	t := time.NewTicker(eventEvery)
	defer t.Stop()
	var line []byte
	for i := int64(0); i < n; i++ {
		line = append(strconv.AppendInt(append(line[:0], "data: "...), i, 10), "\n\n"...)
		if _, err := w.Write(line); err != nil || flush() != nil {
			return
		}
		select {
		case <-t.C:
		case <-done:
			return
		}
	}
}

// fillerReader reads the filler's bytes without end: a body source that
// io.Copy cannot hand to the kernel (no file, no socket).
type fillerReader struct{}

func (fillerReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], filler)
	}
	return n, nil
}

// sendFiller sends n filler bytes: in 32 KiB Writes, or (stream) through
// io.Copy from a reader that is not a file.
func sendFiller(w io.Writer, n int64, stream bool) {
	if stream {
		io.Copy(w, io.LimitReader(fillerReader{}, n))
		return
	}
	writeFiller(w, n)
}

func writeFiller(w io.Writer, n int64) {
	for n > 0 {
		k := min(n, int64(len(filler)))
		if _, err := w.Write(filler[:k]); err != nil {
			return
		}
		n -= k
	}
}

// Handler serves the same endpoints as an http.Handler, routed with Go
// 1.22 ServeMux patterns.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{textPlain}
		w.Write(hello)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{appJSON}
		w.Write(helloJSON)
	})
	for _, prefix := range []string{"/bytes/", "/stream/"} {
		mux.HandleFunc(prefix+"{n}", func(w http.ResponseWriter, r *http.Request) {
			n, ok := parseSuffix(r.URL.Path, prefix, MaxBytes)
			if !ok {
				http.Error(w, "want "+prefix+"{n} with 0 ≤ n ≤ 1 GiB", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
			sendFiller(w, n, prefix == "/stream/")
		})
	}
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength >= 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		io.Copy(w, r.Body)
	})
	mux.HandleFunc("/discard", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return
		}
		w.Header()["Content-Type"] = []string{textPlain}
		io.WriteString(w, strconv.FormatInt(n, 10))
	})
	mux.HandleFunc("/delay/{ms}", func(w http.ResponseWriter, r *http.Request) {
		ms, ok := parseSuffix(r.URL.Path, "/delay/", MaxDelay.Milliseconds())
		if !ok {
			http.Error(w, "want /delay/{ms} with 0 ≤ ms ≤ 60000", http.StatusBadRequest)
			return
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		w.Header()["Content-Type"] = []string{textPlain}
		w.Write(hello)
	})
	mux.HandleFunc("/ws", handlerWS)
	mux.HandleFunc("/goroutines", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{textPlain}
		io.WriteString(w, strconv.Itoa(runtime.NumGoroutine()))
	})
	mux.HandleFunc("/events/{s}", func(w http.ResponseWriter, r *http.Request) {
		n, ok := parseSuffix(r.URL.Path, "/events/", MaxEvents)
		if !ok {
			http.Error(w, "want /events/{s} with 0 ≤ s ≤ 3600", http.StatusBadRequest)
			return
		}
		w.Header()["Content-Type"] = []string{"text/event-stream"}
		rc := http.NewResponseController(w)
		sendEvents(w, n, rc.Flush, r.Context().Done())
	})
	return mux
}
