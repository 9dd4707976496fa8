package middleware

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRecoverBeforeWrite(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	h := RequestID{}.Wrap(Recover{Logger: logger}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "99")
		panic("boom")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Length") != "" {
		t.Fatalf("status %d, Content-Length %q; want 500 and none", rec.Code, rec.Header().Get("Content-Length"))
	}
	recs := logs.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	m := recs[0]
	if m["panic"] != "boom" || m["level"] != "ERROR" || m["path"] != "/x" || m["request_id"] == nil ||
		!strings.Contains(m["stack"].(string), "recover_test.go") {
		t.Fatalf("record %v", m)
	}
}

// On a real server: the connection survives a recovered panic and serves
// the next request; a panic after the head went out aborts the response.
func TestRecoverOnServers(t *testing.T) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		panic("late boom")
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	h := Recover{Logger: logger}.Wrap(mux)
	engines(t, h, func(t *testing.T, base string) {
		c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
		defer c.CloseIdleConnections()
		for _, path := range []string{"/panic", "/ok", "/panic", "/ok"} {
			resp, err := c.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if want := map[string]int{"/panic": 500, "/ok": 200}[path]; resp.StatusCode != want {
				t.Fatalf("%s: %d, want %d", path, resp.StatusCode, want)
			}
		}
		resp, err := c.Get(base + "/late")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Fatal("a panic after the head went out ended as a complete response")
		}
	})
}

func TestRecoverPassesAbortHandler(t *testing.T) {
	h := Recover{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	defer func() {
		if v := recover(); !errors.Is(v.(error), http.ErrAbortHandler) {
			t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	t.Fatal("no panic")
}
