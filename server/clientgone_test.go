package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestClientGoneEndsContext: a client that leaves (its request canceled:
// on HTTP/1.1 its connection closes, on HTTP/2 its stream is reset)
// cancels the request's context, as net/http's servers do, wherever its
// handler is, on every mode of the http.Handler API (the native API has
// no request context):
//   - waiting on the context, or on a context derived from it;
//   - waiting, after reading the whole body;
//   - reading the body: the read fails first, then the context ends
//     (on HTTP/1.1 the disconnect watcher needs the whole body read to
//     start, so the failed read must end it);
//   - writing a long response while the body is unread (on HTTP/1.1 no
//     watcher can see the client leave then: the failed write must end
//     the context).
func TestClientGoneEndsContext(t *testing.T) {
	for _, where := range []string{"waiting", "waiting on a derived context", "waiting after the body", "reading the body", "writing"} {
		t.Run(strings.ReplaceAll(where, " ", "-"), func(t *testing.T) {
			runModes(t, func(t *testing.T, m mode) {
				t.Parallel()
				testClientGoneEndsContext(t, m, where)
			}, handlerModes()...)
		})
	}
}

func testClientGoneEndsContext(t *testing.T, m mode, where string) {
	here := make(chan struct{})   // the handler is where the client leaves it
	result := make(chan error, 1) // what the handler saw
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		switch where {
		case "waiting on a derived context":
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Minute)
			defer cancel()
		case "waiting after the body":
			if b, err := io.ReadAll(r.Body); err != nil || string(b) != "abc" {
				result <- fmt.Errorf("the body: %q %v", b, err)
				return
			}
		case "reading the body":
			if _, err := io.ReadFull(r.Body, make([]byte, 1000)); err != nil {
				result <- fmt.Errorf("the first 1000 bytes of the body: %v", err)
				return
			}
			close(here)
			if _, err := io.Copy(io.Discard, r.Body); err == nil {
				result <- errors.New("the body read did not fail when the client left")
				return
			}
		case "writing":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(here)
			chunk := make([]byte, 64<<10)
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				_, err = w.Write(chunk)
			}
		}
		if where != "reading the body" && where != "writing" {
			close(here)
		}
		select {
		case <-ctx.Done():
			result <- r.Context().Err()
		case <-time.After(5 * time.Second):
			result <- errors.New("the context not canceled 5 s after the client left")
		}
	})
	base, c := m.serve(t, &Server{}, h, nil)
	ctx, cancel := context.WithCancel(context.Background())
	leave := cancel
	defer leave()
	var req *http.Request
	switch where {
	case "waiting after the body":
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/", strings.NewReader("abc"))
	case "reading the body", "writing":
		// A body declared long, of which 1000 bytes come; the rest
		// never does.
		pr, pw := io.Pipe()
		go pw.Write(make([]byte, 1000))
		// Go's HTTP/1.1 client waits for the body's writer before
		// Do returns: the body ends with the client.
		leave = func() {
			cancel()
			pw.CloseWithError(errors.New("the client left"))
		}
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/", pr)
		req.ContentLength = 1 << 20
	default:
		req, _ = http.NewRequestWithContext(ctx, "GET", base+"/", nil)
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if resp, err := c.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case <-here:
	case err := <-result:
		t.Fatalf("before the client left: %v", err)
	}
	leave()
	if err := <-result; err != context.Canceled {
		t.Fatalf("context error %v, want context.Canceled", err)
	}
	<-answered
}
