package server

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestInvalidResponseFieldsNeverInject: response fields a handler set
// that the protocol cannot carry as they are (a name that is not a token,
// a value with CR, LF or NUL), in the head and as trailers, never inject
// a field or spoil the response, on every mode of the http.Handler API.
// HTTP/2 leaves them out, as net/http's HTTP/2 server does (the hand-off
// modes are that server: the same expectations on the four HTTP/2 modes
// compare hotpath's engine with it), rather than sending what the client
// would reject with the whole response (RFC 9113 §8.2.1). HTTP/1.1 drops
// the name and turns CR, LF and NUL into spaces, as net/http's HTTP/1.1
// turns CR and LF.
func TestInvalidResponseFieldsNeverInject(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Crlf"] = []string{"a\r\nX-Injected: 1"}
		w.Header()["X-Nul"] = []string{"a\x00b"}
		w.Header()["Bad Name"] = []string{"x"}
		w.Header()["X-Good"] = []string{"ok"}
		if r.URL.Path == "/trailer" {
			w.Header().Set("Trailer", "X-T, X-T-Bad")
		}
		io.WriteString(w, "body")
		w.Header().Set("X-T", "fine")
		w.Header().Set("X-T-Bad", "a\nb")
	})
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{}, h, nil)
		for _, path := range []string{"/", "/trailer"} {
			resp, body := mustDo(t, c, mustRequest(t, "GET", base+path))
			var fields []string // every field but those the server adds
			for k, vv := range resp.Header {
				if k != "Date" && k != "Content-Length" && k != "Content-Type" {
					fields = append(fields, fmt.Sprintf("%s=%q", k, vv))
				}
			}
			for k, vv := range resp.Trailer {
				fields = append(fields, fmt.Sprintf("trailer %s=%q", k, vv))
			}
			slices.Sort(fields)
			got := strings.Join(fields, " ")
			want := `X-Good=["ok"]`
			if !m.isH2() {
				want = `X-Crlf=["a  X-Injected: 1"] X-Good=["ok"] X-Nul=["a b"]`
			}
			if path == "/trailer" {
				if m.isH2() {
					// Declared in Trailer, so Go's client lists the
					// name; the value, not a valid one, is left out.
					want += ` trailer X-T-Bad=[] trailer X-T=["fine"]`
				} else {
					want += ` trailer X-T-Bad=["a b"] trailer X-T=["fine"]`
				}
			}
			if resp.StatusCode != 200 || string(body) != "body" || got != want {
				t.Errorf("%s: %d %q, fields %s; want 200 \"body\", fields %s", path, resp.StatusCode, body, got, want)
			}
		}
	}, handlerModes()...)
}
