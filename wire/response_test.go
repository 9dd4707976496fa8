package wire_test

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire"
)

// responseVectors are response heads with what Parse must make of them.
// err nil: accepted with the given status and framing (for a GET).
var responseVectors = []struct {
	name, raw string
	err       error
	status    int
	framing   wire.Framing
	length    int64
	close     bool
}{
	{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", nil, 200, wire.LengthBody, 5, false},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", nil, 200, wire.ChunkedBody, -1, false},
	{"close-delimited", "HTTP/1.1 200 OK\r\n\r\n", nil, 200, wire.CloseBody, -1, false},
	{"http/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", nil, 200, wire.LengthBody, 0, true},
	{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", nil, 200, wire.LengthBody, 0, false},
	{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n", nil, 200, wire.LengthBody, 2, true},
	{"204 no body", "HTTP/1.1 204 No Content\r\n\r\n", nil, 204, wire.NoBody, -1, false},
	{"304 with length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", nil, 304, wire.NoBody, 10, false},
	{"100 continue", "HTTP/1.1 100 Continue\r\n\r\n", nil, 100, wire.NoBody, -1, false},
	{"no reason", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", nil, 200, wire.LengthBody, 0, false},
	{"empty reason", "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", nil, 404, wire.LengthBody, 0, false},
	{"unknown code", "HTTP/1.1 599 Whatever\r\nContent-Length: 0\r\n\r\n", nil, 599, wire.LengthBody, 0, false},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", nil, 200, wire.LengthBody, 1, false},
	{"same length twice", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", nil, 200, wire.LengthBody, 3, false},

	{"incomplete", "HTTP/1.1 200 OK\r\nContent-Le", wire.ErrNeedMore, 0, 0, 0, false},
	{"incomplete line", "HTTP/1.1 20", wire.ErrNeedMore, 0, 0, 0, false},
	{"length and chunked", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", wire.ErrLengthAndChunked, 0, 0, 0, false},
	{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", wire.ErrConflictingLength, 0, 0, 0, false},
	{"gzip coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", wire.ErrUnsupportedTE, 0, 0, 0, false},
	{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wire.ErrBadContentLength, 0, 0, 0, false},
	{"obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", wire.ErrObsFold, 0, 0, 0, false},
	{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\n", wire.ErrBadHeaderName, 0, 0, 0, false},
	{"space before colon, chunked", "HTTP/1.1 200 OK\r\ntransfer-encoding : chunked\r\n\r\n", wire.ErrBadHeaderName, 0, 0, 0, false},
	{"tab before colon", "HTTP/1.1 200 OK\r\nFoo\t: bar\r\n\r\n", wire.ErrBadHeaderName, 0, 0, 0, false},
	{"space before colon, not framing", "HTTP/1.1 200 OK\r\nFoo : bar\r\nContent-Length: 1\r\n\r\n", nil, 200, wire.LengthBody, 1, false},
	{"http/2 status line", "HTTP/2.0 200 OK\r\n\r\n", wire.ErrVersionUnsupported, 0, 0, 0, false},
	{"not a version", "HTTP/1.x 200 OK\r\n\r\n", wire.ErrBadVersion, 0, 0, 0, false},
	{"two-digit code", "HTTP/1.1 20 OK\r\n\r\n", wire.ErrBadStatusCode, 0, 0, 0, false},
	{"four-digit code", "HTTP/1.1 2000 OK\r\n\r\n", wire.ErrBadStatusCode, 0, 0, 0, false},
	{"leading zero code", "HTTP/1.1 099 OK\r\n\r\n", wire.ErrBadStatusCode, 0, 0, 0, false},
	{"short line", "HTTP/1.1\r\n\r\n", wire.ErrBadStatusLine, 0, 0, 0, false},
	{"control in reason", "HTTP/1.1 200 O\x01K\r\n\r\n", wire.ErrBadStatusLine, 0, 0, 0, false},
	{"chunked on 1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", wire.ErrTEOnHTTP10, 0, 0, 0, false},
}

func TestResponseParse(t *testing.T) {
	lim := wire.DefaultLimits()
	var r wire.Response
	for _, v := range responseVectors {
		t.Run(v.name, func(t *testing.T) {
			n, err := r.Parse([]byte(v.raw), &lim)
			if !errors.Is(err, v.err) {
				t.Fatalf("err = %v, want %v", err, v.err)
			}
			if err != nil {
				return
			}
			if r.StatusCode != v.status || r.Framing(false) != v.framing || r.ContentLength != v.length || r.Close != v.close {
				t.Fatalf("got status %d framing %d length %d close %v", r.StatusCode, r.Framing(false), r.ContentLength, r.Close)
			}
			if !strings.HasSuffix(v.raw[:n], "\n\n") && !strings.HasSuffix(v.raw[:n], "\r\n\r\n") {
				t.Fatalf("n = %d does not end at the blank line of %q", n, v.raw)
			}
			if r.Framing(true) != wire.NoBody {
				t.Fatal("a response to HEAD has a body")
			}
			// net/http must read the same message the same way.
			checkResponseAgainstNetHTTP(t, []byte(v.raw), &r, n)
		})
	}
}

func TestResponseLimits(t *testing.T) {
	lim := wire.Limits{MaxRequestLineBytes: 64, MaxHeaderBytes: 128, MaxHeaders: 2}.WithDefaults()
	var r wire.Response
	cases := []struct {
		raw  string
		want error
	}{
		{"HTTP/1.1 200 " + strings.Repeat("x", 80) + "\r\n\r\n", wire.ErrBadStatusLine},
		{"HTTP/1.1 200 OK\r\nA: " + strings.Repeat("x", 200) + "\r\n\r\n", wire.ErrHeaderTooLarge},
		{"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", wire.ErrTooManyHeaders},
	}
	for _, c := range cases {
		if _, err := r.Parse([]byte(c.raw), &lim); err != c.want {
			t.Errorf("%.30q: err = %v, want %v", c.raw, err, c.want)
		}
	}
}

func TestResponseHeaderAndReuse(t *testing.T) {
	lim := wire.DefaultLimits()
	var r wire.Response
	raw := []byte("HTTP/1.1 201 Created\r\nLocation: /x\r\nX-A: 1\r\nContent-Length: 0\r\n\r\n")
	if _, err := r.Parse(raw, &lim); err != nil {
		t.Fatal(err)
	}
	if string(r.Header("location")) != "/x" || r.Header("missing") != nil || string(r.Reason) != "Created" {
		t.Fatalf("Header lookups wrong: %+v", r)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := r.Parse(raw, &lim); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Parse allocates %.1f times per head, want 0", allocs)
	}
}

func TestAppendRequestLine(t *testing.T) {
	b := wire.AppendRequestLine(nil, "GET", "/a?b=c")
	b = wire.AppendContentLength(b, 42)
	if got := string(b); got != "GET /a?b=c HTTP/1.1\r\nContent-Length: 42\r\n" {
		t.Fatalf("got %q", got)
	}
}

// checkResponseAgainstNetHTTP checks that http.ReadResponse accepts a head
// wire accepted, with the same status, fields and framing.
func checkResponseAgainstNetHTTP(t *testing.T, raw []byte, r *wire.Response, n int) {
	t.Helper()
	req := &http.Request{Method: "GET"}
	hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw[:n])), req)
	if err != nil {
		t.Fatalf("wire accepted %q, net/http refused: %v", raw[:n], err)
	}
	if hr.StatusCode != r.StatusCode || hr.ProtoMinor != r.ProtoMinor {
		t.Fatalf("net/http reads status %d minor %d, wire %d %d", hr.StatusCode, hr.ProtoMinor, r.StatusCode, r.ProtoMinor)
	}
	fields := 0
	for _, vs := range hr.Header {
		fields += len(vs)
	}
	if r.Chunked || r.ContentLength >= 0 && r.Framing(false) == wire.LengthBody {
		// net/http folds the framing fields into fields of its own.
		fields = len(r.Headers)
	}
	if fields > len(r.Headers) {
		t.Fatalf("net/http sees %d fields, wire %d", fields, len(r.Headers))
	}
	switch r.Framing(false) {
	case wire.ChunkedBody:
		if len(hr.TransferEncoding) != 1 || hr.TransferEncoding[0] != "chunked" {
			t.Fatalf("wire chunked, net/http TransferEncoding %v", hr.TransferEncoding)
		}
	case wire.LengthBody:
		if hr.ContentLength != r.ContentLength {
			t.Fatalf("wire length %d, net/http %d", r.ContentLength, hr.ContentLength)
		}
	case wire.CloseBody:
		if hr.ContentLength != -1 || !hr.Close {
			t.Fatalf("wire close-delimited, net/http length %d close %v", hr.ContentLength, hr.Close)
		}
	}
	if r.Framing(false) != wire.CloseBody && r.Close != hr.Close {
		t.Fatalf("wire close %v, net/http %v", r.Close, hr.Close)
	}
}

// FuzzParseResponse: Parse never panics or over-reads, its answer does not
// depend on how the input is split, and net/http reads every head wire
// accepts the same way.
func FuzzParseResponse(f *testing.F) {
	for _, v := range responseVectors {
		f.Add([]byte(v.raw))
	}
	lim := wire.DefaultLimits()
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r wire.Response
		n, err := r.Parse(raw, &lim)
		if err == wire.ErrNeedMore {
			return
		}
		if err != nil {
			var we *wire.Error
			if !errors.As(err, &we) || we.Reason == "" {
				t.Fatalf("error %v is not a *wire.Error with a reason", err)
			}
			return
		}
		if n <= 0 || n > len(raw) {
			t.Fatalf("n = %d of %d bytes", n, len(raw))
		}
		// Every shorter prefix is incomplete or the same error-free head.
		var p wire.Response
		for cut := 0; cut < n; cut++ {
			if _, err := p.Parse(raw[:cut], &lim); err != wire.ErrNeedMore {
				// A prefix may be refused only by a limit it already breaks;
				// with default limits and a head that fits, it may not.
				t.Fatalf("prefix of %d/%d bytes: %v, want ErrNeedMore", cut, n, err)
			}
		}
		checkResponseAgainstNetHTTP(t, raw, &r, n)
	})
}
