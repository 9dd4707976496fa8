package server

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestReadStallCutsStalledUpload: ReadStallTimeout cuts an upload whose
// client stops sending, on every mode and both APIs: the handler's read of
// the body fails (on HTTP/1.1 the connection ends, on HTTP/2 the stream
// is reset), instead of waiting for the rest of the body. (An upload that
// keeps moving for longer than the timeout goes through:
// TestDropInStallTimeoutsKeepHealthyStreams.)
func TestReadStallCutsStalledUpload(t *testing.T) {
	const stall = 200 * time.Millisecond
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		read := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := io.Copy(io.Discard, r.Body)
			read <- err
		})
		nh := func(c *Ctx) {
			_, err := io.Copy(io.Discard, c.Body())
			read <- err
		}
		base, c := m.serve(t, &Server{ReadStallTimeout: stall, MaxRequestBodyBytes: -1}, h, nh)
		pr, pw := io.Pipe()
		defer pw.Close()
		req, _ := http.NewRequest("POST", base+"/", pr)
		req.ContentLength = 100000
		go func() {
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		pw.Write([]byte("partial")) // and no more
		select {
		case err := <-read:
			if err == nil {
				t.Fatal("a stalled upload read as complete")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("an upload whose client stopped sending was not cut")
		}
	})
}
