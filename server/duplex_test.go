package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// A request body read on a goroutine of the handler's own while the
// handler works on its response (a proxy's shape): nothing the two share
// may race (the race detector watches), and both get every byte.

// TestFullDuplexFromAnotherGoroutine: a big body read on a goroutine of
// the handler's own while the handler streams a big response, after
// http.ResponseController.EnableFullDuplex (HTTP/2 is full duplex
// anyway). Both get every byte, with a declared length and without one,
// on every http.Handler mode (the native API's Ctx is the handler's
// goroutine's alone).
func TestFullDuplexFromAnotherGoroutine(t *testing.T) {
	const size = 2 << 20
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		got := make(chan int64, 1)
		go func() {
			n, _ := io.Copy(io.Discard, r.Body)
			got <- n
		}()
		chunk := bytes.Repeat([]byte("r"), 32<<10)
		for range size / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Header().Set(http.TrailerPrefix+"X-Body", fmt.Sprint(<-got))
	})
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, h, nil)
		for _, declared := range []bool{false, true} {
			var body io.Reader = io.MultiReader(bytes.NewReader(make([]byte, size))) // unknown length: chunked on HTTP/1.1
			if declared {
				body = bytes.NewReader(make([]byte, size))
			}
			req, _ := http.NewRequest("POST", base+"/", body)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != size || resp.Trailer.Get("X-Body") != fmt.Sprint(size) {
				t.Fatalf("declared=%v: response %d bytes (%v), the handler read %q of %d", declared, n, err, resp.Trailer.Get("X-Body"), size)
			}
		}
	}, handlerModes()...)
}

// TestDeadlinesWhileBodyReadElsewhere: the handler sets its read and
// write deadlines (http.ResponseController) while another goroutine
// reads the body, which arms deadlines of its own (and, with
// Expect: 100-continue, sends the 100): nothing they share may race, and
// the body arrives whole. On every http.Handler mode (the native API has
// no read deadline, and its Ctx is the handler's goroutine's alone).
func TestDeadlinesWhileBodyReadElsewhere(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		got := make(chan int64, 1)
		go func() {
			n, _ := io.Copy(io.Discard, r.Body)
			got <- n
		}()
		for range 50 {
			rc.SetReadDeadline(time.Now().Add(10 * time.Second))
			rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			time.Sleep(100 * time.Microsecond)
		}
		fmt.Fprint(w, <-got)
	})
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // a race test: other modes' load varies its timing, no more
		base, c := m.serve(t, &Server{}, h, nil)
		// With Expect, the client waits for the 100, which the body's
		// first read sends: the final answer waits for the whole body.
		c.Transport.(*http.Transport).ExpectContinueTimeout = time.Minute
		for _, expect := range []bool{false, true} {
			pr, pw := io.Pipe()
			go func() { // the body in pieces, while the handler sets its deadlines
				for range 16 {
					time.Sleep(time.Millisecond)
					pw.Write(bytes.Repeat([]byte("b"), 4096))
				}
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", base+"/", pr)
			req.ContentLength = 65536
			if expect {
				req.Header.Set("Expect", "100-continue")
			}
			if resp, b := mustDo(t, c, req); resp.StatusCode != 200 || string(b) != "65536" {
				t.Fatalf("expect=%v: %d %q", expect, resp.StatusCode, b)
			}
		}
	}, handlerModes()...)
}
