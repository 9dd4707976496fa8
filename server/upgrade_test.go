package server

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A 101 answer keeps the handler's "Connection: Upgrade" alone, even to
// a request that said "Connection: close": a "close" added beside it
// made Go's client refuse the switch. As net/http's server does. The
// switched connection then carries the new protocol (an echo here).
//
// Modes: HTTP/1.1 and its TLS, on the http.Handler API: a protocol switch
// (101, Upgrade, Hijack) exists only there (HTTP/2 forbids them, RFC
// 9113 §8.6; the native API has no Hijack).
func TestSwitchingProtocolsKeepsConnectionUpgrade(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "echo")
		w.WriteHeader(http.StatusSwitchingProtocols)
		nc, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer nc.Close()
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo: " + line)
		brw.Flush()
	})
	for _, m := range []mode{{"h1", false}, {"https1", false}} {
		t.Run(m.String(), func(t *testing.T) {
			base, c := m.serve(t, &Server{}, h, nil)
			req := mustRequest(t, "GET", base+"/")
			req.Close = true
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
			// No Client.Timeout: its body wrapper hides the switched
			// connection's Write.
			resp, err := (&http.Client{Transport: c.Transport}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("status %d, want 101", resp.StatusCode)
			}
			if got := resp.Header.Values("Connection"); len(got) != 1 || !strings.EqualFold(got[0], "Upgrade") {
				t.Errorf("Connection: %q, want only \"Upgrade\"", got)
			}
			rw, ok := resp.Body.(io.ReadWriteCloser)
			if !ok {
				t.Fatalf("the client did not switch: the body is a %T, not an io.ReadWriteCloser", resp.Body)
			}
			if _, err := io.WriteString(rw, "hello\n"); err != nil {
				t.Fatal(err)
			}
			got, err := bufio.NewReader(rw).ReadString('\n')
			if err != nil || got != "echo: hello\n" {
				t.Errorf("over the switched connection: %q, %v; want \"echo: hello\\n\"", got, err)
			}
		})
	}
}
