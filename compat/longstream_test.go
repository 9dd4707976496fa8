package compat_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// stall is the hotpath server's Read/WriteStallTimeout in these tests:
// the 60 s default scaled down 600 times, so a one-second stream stands
// for a ten-minute one.
const stall = 100 * time.Millisecond

// serveHotpathStall is serveHotpath with the stall timeouts scaled down.
func serveHotpathStall(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0),
		ReadStallTimeout: stall, WriteStallTimeout: stall, Protocols: protocols(h2Mode)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestLongEventStream: a server-sent event stream ten times longer than
// the stall timeout, with pauses longer than it between events, reaches
// the client whole on both engines (net/http has no such timeout).
func TestLongEventStream(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for i := 0; i < 8; i++ {
			fmt.Fprintf(w, "id: %d\ndata: tick %d\n\n", i, i)
			w.(http.Flusher).Flush()
			time.Sleep(stall + 25*time.Millisecond) // idle longer than the stall timeout
		}
		io.WriteString(w, "event: end\ndata: bye\n\n")
	})
	var got []string
	for _, e := range []engine{{"hotpath", serveHotpathStall}, {"net/http", serveNetHTTP}} {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, h)
			resp, err := newClient(t).Get(base + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var events []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "data: ") {
					events = append(events, line)
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("stream cut after %d events: %v", len(events), err)
			}
			got = append(got, fmt.Sprintf("%s %s %q", resp.Header.Get("Content-Type"), resp.TransferEncoding, events))
		})
	}
	if len(got) != 2 || got[0] != got[1] || !strings.Contains(got[0], "data: bye") {
		t.Fatalf("engines differ or the stream was cut:\nhotpath  %s\nnet/http %s", got[0], got[len(got)-1])
	}
}

// TestLongSlowUpload: an upload that trickles for ten stall timeouts,
// a little at a time, is read whole on both engines.
func TestLongSlowUpload(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d %v", n, err)
	})
	for _, e := range []engine{{"hotpath", serveHotpathStall}, {"net/http", serveNetHTTP}} {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, h)
			pr, pw := io.Pipe()
			go func() {
				for i := 0; i < 20; i++ {
					pw.Write(make([]byte, 512))
					time.Sleep(stall / 2)
				}
				pw.Close()
			}()
			resp, err := newClient(t).Post(base+"/upload", "application/octet-stream", pr)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "10240 <nil>" {
				t.Fatalf("%d %q", resp.StatusCode, b)
			}
		})
	}
}
