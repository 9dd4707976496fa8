package compat_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"
)

// uploadSize is past the 4 MiB that servers commonly cap bodies at.
const uploadSize = 20 << 20

// hashHandler reads the whole request body into a hash, as a handler
// storing an upload does, and answers with its length and hash.
func hashHandler(w http.ResponseWriter, r *http.Request) {
	sum, n, err := hashStream(r.Body)
	if err != nil {
		status := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		http.Error(w, fmt.Sprintf("read %d bytes, then: %v", n, err), status)
		return
	}
	fmt.Fprintf(w, "Content-Length=%d Transfer-Encoding=%q: read %d bytes, sha256 %s",
		r.ContentLength, r.TransferEncoding, n, sum)
}

// TestLargeUpload posts 20 MB to a plain handler that reads it whole, with
// Content-Length and chunked (a body of unknown length), each with and
// without "Expect: 100-continue" (the client then waits for the server's
// go-ahead, as curl does for large bodies). Both engines must answer 200
// with the body's hash, and send 100 Continue when asked.
func TestLargeUpload(t *testing.T) {
	want := patternSum(uploadSize)
	for _, cs := range []struct {
		name            string
		chunked, expect bool
	}{
		{"Content-Length", false, false},
		{"chunked", true, false},
		{"Content-Length, Expect 100-continue", false, true},
		{"chunked, Expect 100-continue", true, true},
	} {
		t.Run(cs.name, func(t *testing.T) {
			obs := observed{}
			for _, e := range engines {
				t.Run(e.name, func(t *testing.T) {
					base := e.serve(t, http.HandlerFunc(hashHandler))
					tr := protoTransport(&http.Transport{ExpectContinueTimeout: 5 * time.Second})
					t.Cleanup(tr.CloseIdleConnections)
					c := &http.Client{Transport: protoClientCheck(t, tr), Timeout: 30 * time.Second}
					var got100 atomic.Bool
					trace := &httptrace.ClientTrace{Got100Continue: func() { got100.Store(true) }}
					req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace),
						"POST", base+"/upload", newPattern(uploadSize))
					req.ContentLength = uploadSize
					if cs.chunked {
						req.ContentLength = -1
					}
					if cs.expect {
						req.Header.Set("Expect", "100-continue")
					}
					start := time.Now()
					resp, err := c.Do(req)
					if err != nil {
						obs.add(e.name, "error %s", errString(err))
						t.Fatalf("upload: %v", err)
					}
					raw, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					b := string(raw)
					if err != nil {
						b += " (" + errString(err) + ")"
					}
					obs.add(e.name, "%d %q, 100 Continue received: %v", resp.StatusCode, b, got100.Load())
					te := "[]"
					if cs.chunked && !h2Mode { // HTTP/2 has no chunked coding: a body of unknown length is just DATA frames
						te = `["chunked"]`
					}
					wantBody := fmt.Sprintf("Content-Length=%d Transfer-Encoding=%s: read %d bytes, sha256 %s",
						req.ContentLength, te, uploadSize, want)
					if resp.StatusCode != 200 || b != wantBody {
						t.Errorf("%d %q, want 200 %q", resp.StatusCode, b, wantBody)
					}
					if cs.expect && !got100.Load() && resp.StatusCode == 200 {
						t.Errorf("no 100 Continue: the client waited %v before sending", time.Since(start))
					}
				})
			}
			obs.compare(t, "response")
		})
	}
}
