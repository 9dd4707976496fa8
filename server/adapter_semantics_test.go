package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

// The semantics tests: what net/http does for a handler beyond parsing
// (file serving, ranges and conditional requests, sniffing, framing,
// WriteHeader and Write rules, body limits, the standard wrappers,
// trailers, 100-continue), run on hotpath's adapter and on net/http and
// compared response by response. Differences are listed in
// knownAdapterBugs and deliberateDifferences (adapter_diff_test.go) under
// "semantics/" names, with the same rule: unlisted differences fail, and
// so do listed ones that no longer differ.

// semModTime is the modification time of every served file and content.
var semModTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

var semFiles = fstest.MapFS{
	"hello.txt":      {Data: []byte("Hello, files!\n"), ModTime: semModTime},
	"page.html":      {Data: []byte("<!DOCTYPE html><title>p</title>"), ModTime: semModTime},
	"index.html":     {Data: []byte("<p>index</p>"), ModTime: semModTime},
	"dir/a.txt":      {Data: []byte("a"), ModTime: semModTime},
	"dir/b.txt":      {Data: []byte("b"), ModTime: semModTime},
	"big.bin":        {Data: bytes.Repeat([]byte("0123456789abcdef"), 1024), ModTime: semModTime},
	"noext":          {Data: []byte("%PDF-1.4 not really"), ModTime: semModTime},
	"sub/index.html": {Data: []byte("<p>sub</p>"), ModTime: semModTime},
}

// semContent is what /content serves with http.ServeContent.
var semContent = []byte("0123456789abcdefghijklmnopqrstuvwxyz")

// semWriteErrs receives the errors some handlers get from Write, so the
// test can compare them between the engines.
var semWriteErrs = make(chan string, 16)

func semanticsMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/files/", http.StripPrefix("/files", http.FileServer(http.FS(semFiles))))
	mux.HandleFunc("/content", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "data.txt", semModTime, bytes.NewReader(semContent))
	})
	mux.HandleFunc("/content-noetag", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "data.bin", semModTime, bytes.NewReader(semContent))
	})

	// Content-Type sniffing.
	mux.HandleFunc("/sniff/html", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html><body>x") })
	mux.HandleFunc("/sniff/png", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("\x89PNG\r\n\x1a\n0000")) })
	mux.HandleFunc("/sniff/json-looking", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"a":1}`) })
	mux.HandleFunc("/sniff/two-writes", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<ht")
		io.WriteString(w, "ml>hello")
	})
	mux.HandleFunc("/sniff/empty", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/sniff/suppressed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		io.WriteString(w, "<html>")
	})
	mux.HandleFunc("/sniff/content-encoding", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		io.WriteString(w, "<html>")
	})
	mux.HandleFunc("/sniff/after-flush", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		io.WriteString(w, "<html>")
	})
	mux.HandleFunc("/sniff/large", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>"+strings.Repeat(" ", 5000))
	})
	mux.HandleFunc("/sniff/204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })

	// Framing: Content-Length for small bodies, chunked for large ones.
	for _, n := range []int{0, 1, 100, 2047, 2048, 2049, 5000, 40000} {
		mux.HandleFunc(fmt.Sprintf("/size/%d", n), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("s"), n))
		})
	}
	mux.HandleFunc("/size/many-small-writes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 30 {
			io.WriteString(w, strings.Repeat("m", 100))
		}
	})
	mux.HandleFunc("/size/declared-large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000")
		w.Write(bytes.Repeat([]byte("d"), 5000))
	})
	mux.HandleFunc("/size/declared-short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "short")
	})
	mux.HandleFunc("/size/flush-then-small", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "a")
		w.(http.Flusher).Flush()
		io.WriteString(w, "b")
	})
	mux.HandleFunc("/size/flush-nothing", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
	})
	mux.HandleFunc("/size/handler-sets-chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Transfer-Encoding", "chunked")
		io.WriteString(w, "small")
	})
	mux.HandleFunc("/size/handler-sets-close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})

	// WriteHeader and Write rules.
	mux.HandleFunc("/status/twice", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "first wins")
	})
	mux.HandleFunc("/status/after-write", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "implicit 200")
		w.WriteHeader(http.StatusTeapot)
	})
	mux.HandleFunc("/status/header-after-writeheader", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Before", "1")
		w.WriteHeader(http.StatusCreated)
		w.Header().Set("X-After", "ignored")
		io.WriteString(w, "created")
	})
	mux.HandleFunc("/status/write-after-204", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		_, err := io.WriteString(w, "not allowed")
		semWriteErrs <- fmt.Sprint(err)
	})
	mux.HandleFunc("/status/write-after-304", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
		_, err := io.WriteString(w, "not allowed")
		semWriteErrs <- fmt.Sprint(err)
	})
	mux.HandleFunc("/status/write-on-head", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.WriteString(w, "discarded body")
		semWriteErrs <- fmt.Sprint(n, err)
	})
	mux.HandleFunc("/status/early-hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	})
	mux.HandleFunc("/status/not-found", http.NotFound)
	mux.HandleFunc("/status/error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "999")
		w.Header().Set("X-Keep", "kept")
		http.Error(w, "teapot", http.StatusTeapot)
	})

	// Body limits.
	mux.HandleFunc("/limit", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 10)
		b, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("body over %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		fmt.Fprintf(w, "ok %q %v", b, err)
	})

	// The standard wrappers.
	mux.Handle("/timeout/fast", http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Inner", "1")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "in time")
	}), time.Minute, "too slow"))
	mux.Handle("/timeout/slow", http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}), 20*time.Millisecond, "too slow"))
	mux.Handle("/api/", http.StripPrefix("/api", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "path=%q rawpath=%q uri=%q escaped=%q", r.URL.Path, r.URL.RawPath, r.RequestURI, r.URL.EscapedPath())
	})))
	mux.Handle("/strict/", http.StripPrefix("/strict/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "path=%q", r.URL.Path)
	})))
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusFound
		switch r.URL.Query().Get("code") {
		case "301":
			code = http.StatusMovedPermanently
		case "303":
			code = http.StatusSeeOther
		case "307":
			code = http.StatusTemporaryRedirect
		case "308":
			code = http.StatusPermanentRedirect
		}
		http.Redirect(w, r, r.URL.Query().Get("to"), code)
	})

	// Response trailers.
	mux.HandleFunc("/trailer/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Checksum, X-Count")
		io.WriteString(w, "body")
		w.Header().Set("X-Checksum", "abc")
		w.Header().Set("X-Count", "4")
	})
	mux.HandleFunc("/trailer/prefix", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "body")
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	})
	mux.HandleFunc("/trailer/after-flush", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "part1")
		w.(http.Flusher).Flush()
		io.WriteString(w, "part2")
		w.Header().Set("X-Sum", "s")
	})
	mux.HandleFunc("/trailer/large-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		w.Write(bytes.Repeat([]byte("t"), 5000))
		w.Header().Set("X-Sum", "big")
	})
	mux.HandleFunc("/trailer/declared-not-set", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Never")
		io.WriteString(w, "body")
	})

	// Request trailers and Expect: 100-continue.
	mux.HandleFunc("/reqtrailer", func(w http.ResponseWriter, r *http.Request) {
		before := fmt.Sprint(r.Trailer)
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "before=%s body=%q err=%v after=%v", before, b, err, r.Trailer)
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "got %q %v", b, err)
	})
	mux.HandleFunc("/upload/refuse", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	})
	return mux
}

// startBothQuiet is startBoth with hotpath's ErrorLog discarded too (some
// handlers here misuse WriteHeader on purpose).
func startBothQuiet(t *testing.T, h http.Handler) (hotpath, nethttp string) {
	t.Helper()
	hotpath = startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = discardLog
	ts.Start()
	t.Cleanup(ts.Close)
	return hotpath, ts.Listener.Addr().String()
}

// semCase is one raw exchange; n responses are read (a 103 counts).
type semCase struct {
	name   string
	raw    string
	method string
	n      int
	status int // when set, net/http's first status: the case tests what its name says
}

func semGET(path, extra string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: sem.example\r\n" + extra + "\r\n"
}

var lastModified = semModTime.Format(http.TimeFormat)

var semCases = []semCase{
	// http.FileServer.
	{name: "file/get", raw: semGET("/files/hello.txt", "")},
	{name: "file/head", raw: "HEAD /files/hello.txt HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD"},
	{name: "file/html-type", raw: semGET("/files/page.html", "")},
	{name: "file/sniffed-type", raw: semGET("/files/noext", "")},
	{name: "file/big", raw: semGET("/files/big.bin", "")},
	{name: "file/range-single", raw: semGET("/files/big.bin", "Range: bytes=10-19\r\n"), status: 206},
	{name: "file/range-suffix", raw: semGET("/files/big.bin", "Range: bytes=-5\r\n")},
	{name: "file/range-open", raw: semGET("/files/hello.txt", "Range: bytes=7-\r\n")},
	{name: "file/range-multi", raw: semGET("/files/big.bin", "Range: bytes=0-3,100-103,-2\r\n"), status: 206},
	{name: "file/range-unsatisfiable", raw: semGET("/files/hello.txt", "Range: bytes=1000-2000\r\n"), status: 416},
	{name: "file/range-malformed", raw: semGET("/files/hello.txt", "Range: bytes=x-y\r\n")},
	{name: "file/range-head", raw: "HEAD /files/big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\n", method: "HEAD", status: 206},
	{name: "file/if-modified-since", raw: semGET("/files/hello.txt", "If-Modified-Since: "+lastModified+"\r\n"), status: 304},
	{name: "file/if-modified-since-older", raw: semGET("/files/hello.txt", "If-Modified-Since: Mon, 01 Jan 2001 00:00:00 GMT\r\n")},
	{name: "file/if-unmodified-since-failed", raw: semGET("/files/hello.txt", "If-Unmodified-Since: Mon, 01 Jan 2001 00:00:00 GMT\r\n"), status: 412},
	{name: "file/directory-listing", raw: semGET("/files/dir/", "")},
	{name: "file/directory-redirect", raw: semGET("/files/dir", ""), status: 301},
	{name: "file/index-redirect", raw: semGET("/files/index.html", "")},
	{name: "file/index-served", raw: semGET("/files/sub/", "")},
	{name: "file/not-found", raw: semGET("/files/missing.txt", ""), status: 404},
	{name: "file/dot-dot", raw: semGET("/files/../server.go", "")},
	{name: "file/escaped", raw: semGET("/files/hello%2etxt", "")},
	{name: "file/post", raw: "POST /files/hello.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", method: "POST"},

	// http.ServeContent.
	{name: "content/get", raw: semGET("/content", "")},
	{name: "content/head", raw: "HEAD /content HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD"},
	{name: "content/range-single", raw: semGET("/content", "Range: bytes=2-5\r\n"), status: 206},
	{name: "content/range-multi", raw: semGET("/content", "Range: bytes=0-1,4-5\r\n"), status: 206},
	{name: "content/range-overlapping", raw: semGET("/content", "Range: bytes=0-10,5-15\r\n")},
	{name: "content/range-unsatisfiable", raw: semGET("/content", "Range: bytes=100-200\r\n"), status: 416},
	{name: "content/if-none-match", raw: semGET("/content", "If-None-Match: \"v1\"\r\n"), status: 304},
	{name: "content/if-none-match-star", raw: semGET("/content", "If-None-Match: *\r\n")},
	{name: "content/if-none-match-other", raw: semGET("/content", "If-None-Match: \"v0\"\r\n")},
	{name: "content/if-none-match-head", raw: "HEAD /content HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"v1\"\r\n\r\n", method: "HEAD", status: 304},
	{name: "content/if-match-failed", raw: semGET("/content", "If-Match: \"v0\"\r\n"), status: 412},
	{name: "content/if-modified-since", raw: semGET("/content-noetag", "If-Modified-Since: "+lastModified+"\r\n"), status: 304},
	{name: "content/if-range-match", raw: semGET("/content", "Range: bytes=0-3\r\nIf-Range: \"v1\"\r\n"), status: 206},
	{name: "content/if-range-mismatch", raw: semGET("/content", "Range: bytes=0-3\r\nIf-Range: \"v0\"\r\n"), status: 200},
	{name: "content/if-range-date", raw: semGET("/content-noetag", "Range: bytes=0-3\r\nIf-Range: "+lastModified+"\r\n")},
	{name: "content/304-then-get", raw: semGET("/content", "If-None-Match: \"v1\"\r\n") + semGET("/content", ""), n: 2},

	// Content-Type sniffing.
	{name: "sniff/html", raw: semGET("/sniff/html", "")},
	{name: "sniff/png", raw: semGET("/sniff/png", "")},
	{name: "sniff/json-looking", raw: semGET("/sniff/json-looking", "")},
	{name: "sniff/two-writes", raw: semGET("/sniff/two-writes", "")},
	{name: "sniff/empty", raw: semGET("/sniff/empty", "")},
	{name: "sniff/suppressed", raw: semGET("/sniff/suppressed", "")},
	{name: "sniff/content-encoding", raw: semGET("/sniff/content-encoding", "")},
	{name: "sniff/after-flush", raw: semGET("/sniff/after-flush", "")},
	{name: "sniff/large", raw: semGET("/sniff/large", "")},
	{name: "sniff/204", raw: semGET("/sniff/204", ""), status: 204},
	{name: "sniff/empty-head", raw: "HEAD /sniff/empty HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD"},
	{name: "sniff/head", raw: "HEAD /sniff/html HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD"},

	// Framing.
	{name: "size/0", raw: semGET("/size/0", "")},
	{name: "size/1", raw: semGET("/size/1", "")},
	{name: "size/100", raw: semGET("/size/100", "")},
	{name: "size/2047", raw: semGET("/size/2047", "")},
	{name: "size/2048", raw: semGET("/size/2048", "")},
	{name: "size/2049", raw: semGET("/size/2049", "")},
	{name: "size/5000", raw: semGET("/size/5000", "")},
	{name: "size/40000", raw: semGET("/size/40000", "")},
	{name: "size/5000-http1.0", raw: "GET /size/5000 HTTP/1.0\r\n\r\n"},
	{name: "size/5000-http1.0-keep-alive", raw: "GET /size/5000 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
	{name: "size/100-http1.0-keep-alive-twice", raw: "GET /size/100 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /size/100 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", n: 2},
	{name: "size/5000-head", raw: "HEAD /size/5000 HTTP/1.1\r\nHost: x\r\n\r\n" + semGET("/size/1", ""), method: "HEAD", n: 2},
	{name: "size/many-small-writes", raw: semGET("/size/many-small-writes", "")},
	{name: "size/declared-large", raw: semGET("/size/declared-large", "")},
	{name: "size/declared-short", raw: semGET("/size/declared-short", "")},
	{name: "size/flush-then-small", raw: semGET("/size/flush-then-small", "")},
	{name: "size/flush-nothing", raw: semGET("/size/flush-nothing", "")},
	{name: "size/flush-http1.0", raw: "GET /size/flush-then-small HTTP/1.0\r\n\r\n"},
	{name: "size/handler-sets-chunked", raw: semGET("/size/handler-sets-chunked", "")},
	{name: "size/handler-sets-close", raw: semGET("/size/handler-sets-close", "") + semGET("/size/1", ""), n: 2},
	{name: "size/pipelined-mixed", raw: semGET("/size/5000", "") + semGET("/size/1", "") + semGET("/size/2049", ""), n: 3},

	// WriteHeader and Write.
	{name: "status/twice", raw: semGET("/status/twice", ""), status: 202},
	{name: "status/after-write", raw: semGET("/status/after-write", "")},
	{name: "status/header-after-writeheader", raw: semGET("/status/header-after-writeheader", "")},
	{name: "status/early-hints", raw: semGET("/status/early-hints", ""), n: 2, status: 103},
	{name: "status/not-found", raw: semGET("/status/not-found", "")},
	{name: "status/error", raw: semGET("/status/error", "")},

	// http.MaxBytesReader and http.Error.
	{name: "limit/under", raw: "POST /limit HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", method: "POST", status: 200},
	{name: "limit/exact", raw: "POST /limit HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789", method: "POST"},
	{name: "limit/over", raw: "POST /limit HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n0123456789a", method: "POST", status: 413},
	{name: "limit/over-chunked", raw: "POST /limit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n0123456789ab\r\n0\r\n\r\n", method: "POST", status: 413},
	{name: "limit/over-then-get", raw: "POST /limit HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n01234567890123456789" + semGET("/size/1", ""), method: "POST", n: 2},

	// http.TimeoutHandler, http.StripPrefix, http.Redirect.
	{name: "timeout/fast", raw: semGET("/timeout/fast", ""), status: 202},
	{name: "timeout/slow", raw: semGET("/timeout/slow", ""), status: 503},
	{name: "strip/plain", raw: semGET("/api/users/1", "")},
	{name: "strip/escaped", raw: semGET("/api/a%2Fb", "")},
	{name: "strip/query", raw: semGET("/api/x?y=1", "")},
	{name: "strip/not-prefixed", raw: semGET("/strict/v2/x", "")},
	{name: "strip/prefixed", raw: semGET("/strict/v1/x", "")},
	{name: "redirect/relative", raw: semGET("/redirect/a/b?to=../c", ""), status: 302},
	{name: "redirect/absolute-path", raw: semGET("/redirect/a?to=/elsewhere", "")},
	{name: "redirect/absolute-url", raw: semGET("/redirect/a?to=https://other.example/x%3Fy", "")},
	{name: "redirect/301", raw: semGET("/redirect/a?code=301&to=/p", ""), status: 301},
	{name: "redirect/303-post", raw: "POST /redirect/a?code=303&to=/p HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", method: "POST", status: 303},
	{name: "redirect/307-head", raw: "HEAD /redirect/a?code=307&to=/p HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD", status: 307},
	{name: "redirect/308-query", raw: semGET("/redirect/a?code=308&to=/p%3Fq%3D1", ""), status: 308},

	// Response trailers.
	{name: "trailer/declared", raw: semGET("/trailer/declared", "")},
	{name: "trailer/prefix", raw: semGET("/trailer/prefix", "")},
	{name: "trailer/after-flush", raw: semGET("/trailer/after-flush", "")},
	{name: "trailer/large-body", raw: semGET("/trailer/large-body", "")},
	{name: "trailer/declared-not-set", raw: semGET("/trailer/declared-not-set", "")},
	{name: "trailer/http1.0", raw: "GET /trailer/declared HTTP/1.0\r\n\r\n"},
	{name: "trailer/head", raw: "HEAD /trailer/declared HTTP/1.1\r\nHost: x\r\n\r\n", method: "HEAD"},

	// Request trailers.
	{name: "reqtrailer/declared-and-sent", raw: "POST /reqtrailer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sig\r\n\r\n4\r\ndata\r\n0\r\nX-Sig: s1\r\n\r\n", method: "POST"},
	{name: "reqtrailer/declared-not-sent", raw: "POST /reqtrailer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sig\r\n\r\n4\r\ndata\r\n0\r\n\r\n", method: "POST"},
	{name: "reqtrailer/none", raw: "POST /reqtrailer HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\ndata", method: "POST"},
}

// semExchange is exchangeRaw with each response's Close flag, which
// http.ReadResponse takes out of the header ("Connection: close").
func semExchange(t *testing.T, addr, raw, method string, n int) []string {
	t.Helper()
	return exchangeWith(t, addr, raw, method, n, func(resp *http.Response, body []byte, err error) string {
		return fmt.Sprintf("close=%v %s", resp.Close, describe(resp, body, err))
	})
}

// boundaryRE finds a multipart boundary, random per response.
var boundaryRE = regexp.MustCompile(`boundary=([0-9a-f]+)`)

func normalizeBoundary(s string) string {
	if m := boundaryRE.FindStringSubmatch(s); m != nil {
		s = strings.ReplaceAll(s, m[1], "BOUNDARY")
	}
	return s
}

// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterSemantics(t *testing.T) {
	hp, nh := startBothQuiet(t, semanticsMux())
	seen := map[string]bool{}
	for _, c := range semCases {
		name := "semantics/" + c.name
		seen[name] = true
		t.Run(c.name, func(t *testing.T) {
			method, n := c.method, c.n
			if method == "" {
				method = "GET"
			}
			if n == 0 {
				n = 1
			}
			got := normalizeBoundary(strings.Join(semExchange(t, hp, c.raw, method, n), "\n"))
			want := normalizeBoundary(strings.Join(semExchange(t, nh, c.raw, method, n), "\n"))
			if got == "" || want == "" {
				t.Fatalf("no response:\nhotpath:  %s\nnet/http: %s", got, want)
			}
			if c.status != 0 && !strings.HasPrefix(want, fmt.Sprintf("close=false %d ", c.status)) &&
				!strings.HasPrefix(want, fmt.Sprintf("close=true %d ", c.status)) {
				t.Fatalf("net/http answered %s, want status %d: the case does not test what it says", want, c.status)
			}
			checkListed(t, name, got == want, "hotpath:  "+got+"\nnet/http: "+want)
		})
	}
	for name := range knownAdapterBugs {
		if strings.HasPrefix(name, "semantics/") && !seen[name] && !semanticsExtra[name] {
			t.Errorf("knownAdapterBugs lists %q, which is not a case", name)
		}
	}
	for name := range deliberateDifferences {
		if strings.HasPrefix(name, "semantics/") && !seen[name] && !semanticsExtra[name] {
			t.Errorf("deliberateDifferences lists %q, which is not a case", name)
		}
	}
}

// semanticsExtra names the semantics checks that are tests of their own
// rather than rows of semCases.
var semanticsExtra = map[string]bool{
	"semantics/write-errors":                   true,
	"semantics/superfluous-writeheader-log":    true,
	"semantics/expect-continue/read-body":      true,
	"semantics/expect-continue/refuse":         true,
	"semantics/expect-continue/http1.0":        true,
	"semantics/client-gone-cancels-context":    true,
	"semantics/timeout-handler-late-goroutine": true,
}

// checkListed applies the maps' rule to one comparison.
func checkListed(t *testing.T, name string, same bool, detail string) {
	t.Helper()
	reason, isDeliberate := deliberateDifferences[name]
	bug, isBug := knownAdapterBugs[name]
	switch {
	case same && (isDeliberate || isBug):
		t.Errorf("listed as different (%s%s) but hotpath and net/http now agree: remove the entry", reason, bug)
	case same:
	case isDeliberate:
		t.Logf("deliberate: %s\n%s", reason, detail)
	case isBug:
		t.Logf("known adapter bug: %s\n%s", bug, detail)
	default:
		t.Errorf("hotpath and net/http differ:\n%s", detail)
	}
}

// TestAdapterSemanticsWriteErrors compares what Write returns where a
// body is not allowed (after 204 and 304) or is discarded (HEAD).
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterSemanticsWriteErrors(t *testing.T) {
	hp, nh := startBothQuiet(t, semanticsMux())
	run := func(addr string) string {
		var out []string
		for _, rq := range []struct{ raw, method string }{
			{semGET("/status/write-after-204", ""), "GET"},
			{semGET("/status/write-after-304", ""), "GET"},
			{"HEAD /status/write-on-head HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD"},
		} {
			resp := semExchange(t, addr, rq.raw, rq.method, 1)
			select {
			case err := <-semWriteErrs:
				out = append(out, fmt.Sprintf("%s → Write: %s", resp, err))
			case <-time.After(5 * time.Second):
				t.Fatalf("handler did not report its Write error")
			}
		}
		return strings.Join(out, "\n")
	}
	got, want := run(hp), run(nh)
	checkListed(t, "semantics/write-errors", got == want, "hotpath:\n"+got+"\nnet/http:\n"+want)
}

// lockedBuffer is a log destination safe for the servers' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAdapterSemanticsSuperfluousWriteHeader: both engines log a second
// WriteHeader, and keep the first status.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire (TestSuperfluousWriteHeader runs
// the behaviour on every mode).
func TestAdapterSemanticsSuperfluousWriteHeader(t *testing.T) {
	var hpLog, nhLog lockedBuffer
	h := semanticsMux()
	hp := startServer(t, &Server{Handler: h, ErrorLog: log.New(&hpLog, "", 0)})
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(&nhLog, "", 0)
	ts.Start()
	t.Cleanup(ts.Close)
	nh := ts.Listener.Addr().String()
	got := semExchange(t, hp, semGET("/status/twice", ""), "GET", 1)
	want := semExchange(t, nh, semGET("/status/twice", ""), "GET", 1)
	logged := func(l *lockedBuffer) bool { return strings.Contains(l.String(), "superfluous") }
	same := fmt.Sprint(got) == fmt.Sprint(want) && logged(&hpLog) == logged(&nhLog)
	checkListed(t, "semantics/superfluous-writeheader-log", same,
		fmt.Sprintf("hotpath:  %s log %q\nnet/http: %s log %q", got, hpLog.String(), want, nhLog.String()))
}

// continueExchange sends a head with "Expect: 100-continue", waits up to
// a second for 100 Continue, sends body if it came (or if sendAnyway),
// and describes what the client saw.
func continueExchange(t *testing.T, addr, head, body string, sendAnyway bool) string {
	t.Helper()
	nc := dial(t, addr)
	io.WriteString(nc, head)
	br := bufio.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(time.Second))
	var b strings.Builder
	resp, err := http.ReadResponse(br, &http.Request{Method: "PUT"})
	switch {
	case err != nil && isTimeout(err):
		b.WriteString("no 100 within 1s; ")
		if sendAnyway {
			io.WriteString(nc, body)
		}
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err = http.ReadResponse(br, &http.Request{Method: "PUT"})
	case err == nil && resp.StatusCode == http.StatusContinue:
		b.WriteString("100 Continue; ")
		io.WriteString(nc, body)
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err = http.ReadResponse(br, &http.Request{Method: "PUT"})
	}
	if err != nil {
		fmt.Fprintf(&b, "error %v", err)
		return b.String()
	}
	rb, rerr := io.ReadAll(resp.Body)
	fmt.Fprintf(&b, "close=%v %s", resp.Close, describe(resp, rb, rerr))
	return b.String()
}

// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterSemanticsExpectContinue(t *testing.T) {
	hp, nh := startBothQuiet(t, semanticsMux())
	cases := []struct {
		name, head, body string
		sendAnyway       bool
	}{
		{"read-body", "PUT /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", "hello", false},
		{"refuse", "PUT /upload/refuse HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", "hello", false},
		{"http1.0", "PUT /upload HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", "hello", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := continueExchange(t, hp, c.head, c.body, c.sendAnyway)
			want := continueExchange(t, nh, c.head, c.body, c.sendAnyway)
			checkListed(t, "semantics/expect-continue/"+c.name, got == want, "hotpath:  "+got+"\nnet/http: "+want)
		})
	}
}

// TestAdapterSemanticsClientGoneCancelsContext: a handler waiting on its
// request's context (long polling, server-sent events) learns that the
// client went away.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterSemanticsClientGoneCancelsContext(t *testing.T) {
	results := make(chan string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			results <- "canceled"
		case <-time.After(time.Second):
			results <- "not canceled within 1s"
		}
	})
	hp, nh := startBothQuiet(t, h)
	run := func(addr string) string {
		nc := dial(t, addr)
		io.WriteString(nc, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
		time.Sleep(50 * time.Millisecond) // the handler is waiting
		nc.Close()
		select {
		case r := <-results:
			return r
		case <-time.After(5 * time.Second):
			t.Fatal("handler never finished")
			return ""
		}
	}
	got, want := run(hp), run(nh)
	checkListed(t, "semantics/client-gone-cancels-context", got == want, "hotpath:  "+got+"\nnet/http: "+want)
}

// TestAdapterSemanticsTimeoutHandlerLateGoroutine: after http.TimeoutHandler
// answers 503, the inner handler's goroutine may still run and read its
// *http.Request. On net/http that request is its own; a reused one would
// be the next request's, overwritten while the goroutine reads it.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterSemanticsTimeoutHandlerLateGoroutine(t *testing.T) {
	type seen struct{ header, url uintptr }
	inner := make(chan seen, 1)
	next := make(chan seen, 1)
	release := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.Handle("/slow", http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // outlives the outer ServeHTTP
		inner <- seen{reflect.ValueOf(r.Header).Pointer(), reflect.ValueOf(r.URL).Pointer()}
	}), 10*time.Millisecond, "too slow"))
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		next <- seen{reflect.ValueOf(r.Header).Pointer(), reflect.ValueOf(r.URL).Pointer()}
	})
	hp, nh := startBothQuiet(t, mux)
	run := func(addr string) string {
		nc := dial(t, addr)
		br := bufio.NewReader(nc)
		io.WriteString(nc, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, _ := readResponse(t, br, "GET")
		io.WriteString(nc, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
		readResponse(t, br, "GET")
		release <- struct{}{}
		a, b := <-inner, <-next
		return fmt.Sprintf("%d; late goroutine shares the next request's Header: %v, URL: %v",
			resp.StatusCode, a.header == b.header, a.url == b.url)
	}
	got, want := run(hp), run(nh)
	checkListed(t, "semantics/timeout-handler-late-goroutine", got == want, "hotpath:  "+got+"\nnet/http: "+want)
}
