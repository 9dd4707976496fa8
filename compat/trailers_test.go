package compat_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// trailerHandlers are the ways a net/http handler sends trailers: named
// in the Trailer header beforehand, or set under http.TrailerPrefix
// (undeclared) before the head goes out, after WriteHeader, or after a
// Flush (how gRPC servers send grpc-status), on short and long bodies.
var trailerHandlers = []struct {
	name string
	h    http.HandlerFunc
}{
	{"declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "short body\n")
		w.Header().Set("X-Sum", "declared")
	}},
	{"declared, long body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Trailer", "X-Sum")
		w.Header().Add("Trailer", "X-Count")
		io.Copy(w, io.LimitReader(strings.NewReader(strings.Repeat("long body line\n", 1000)), 15000))
		w.Header().Set("X-Sum", "declared")
		w.Header().Set("X-Count", "1000")
	}},
	{"prefix before the head", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(http.TrailerPrefix+"X-Sum", "early")
		io.WriteString(w, "short body\n")
		w.Header().Set(http.TrailerPrefix+"X-Sum", "prefixed")
	}},
	{"prefix after WriteHeader", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "short body\n")
		w.Header().Set(http.TrailerPrefix+"X-Sum", "after WriteHeader")
	}},
	{"prefix after Flush", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "flushed part\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "rest\n")
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
		w.Header().Set(http.TrailerPrefix+"Grpc-Message", "")
	}},
	{"prefix after a long body", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, io.LimitReader(strings.NewReader(strings.Repeat("long body line\n", 1000)), 15000))
		w.Header().Set(http.TrailerPrefix+"X-Sum", "after streaming")
	}},
}

// TestResponseTrailers sends response trailers in each of net/http's ways
// and reads them with net/http's client: both engines must frame the
// responses alike and deliver the same trailers.
func TestResponseTrailers(t *testing.T) {
	mux := http.NewServeMux()
	for i, th := range trailerHandlers {
		mux.Handle(fmt.Sprintf("/%d", i), th.h)
	}
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, mux)
			c := newClient(t)
			for i, th := range trailerHandlers {
				resp, err := c.Get(fmt.Sprintf("%s/%d", base, i))
				if err != nil {
					obs.add(e.name, "%s: error %s", th.name, errString(err))
					continue
				}
				announced := sortedKeys(resp.Trailer)
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				var trailers []string
				for _, k := range sortedKeys(resp.Trailer) {
					trailers = append(trailers, fmt.Sprintf("%s=%q", k, resp.Trailer[k]))
				}
				obs.add(e.name, "%s: %d Content-Length=%d Transfer-Encoding=%q, %d bytes (%v), announced %q, trailers %s",
					th.name, resp.StatusCode, resp.ContentLength, resp.TransferEncoding, n, err, announced, trailers)
			}
		})
	}
	obs.compare(t, "responses")
}

// TestRequestTrailers sends a chunked request with trailers, as a client
// that hashes while uploading does: the handler finds the declared names
// in Request.Trailer before reading and their values after.
func TestRequestTrailers(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := fmt.Sprintf("%q", r.Trailer)
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "Transfer-Encoding=%q Trailer header=%q; before reading %s; read %d (%v); after %q",
			r.TransferEncoding, r.Header["Trailer"], before, n, err, r.Trailer)
	})
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, h)
			req, _ := http.NewRequest("POST", base, io.MultiReader(strings.NewReader("uploaded data")))
			req.ContentLength = -1
			req.Trailer = http.Header{"X-Checksum": nil, "X-Parts": nil}
			body := req.Body
			req.Body = struct {
				io.Reader
				io.Closer
			}{readerFunc(func(p []byte) (int, error) {
				n, err := body.Read(p)
				if err == io.EOF {
					req.Trailer.Set("X-Checksum", "c0ffee")
					req.Trailer.Set("X-Parts", "1")
				}
				return n, err
			}), body}
			resp, err := newClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			te := `["chunked"]`
			if h2Mode {
				te = `[]` // HTTP/2 has no chunked coding: trailers are a HEADERS frame after the DATA
			}
			want := `Transfer-Encoding=` + te + ` Trailer header=[]; before reading map["X-Checksum":[] "X-Parts":[]]; ` +
				`read 13 (<nil>); after map["X-Checksum":["c0ffee"] "X-Parts":["1"]]`
			if string(b) != want {
				t.Errorf("got  %s\nwant %s", b, want)
			}
			obs.add(e.name, "%d %s", resp.StatusCode, b)
		})
	}
	obs.compare(t, "handler's view")
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
