package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hotpathhq/hotpath/client"
)

// A negative ExpectContinueTimeout sends the body at once after the head
// of an "Expect: 100-continue" request; the head went out twice before
// (the server then saw a second, bogus request on the connection).
func TestExpectContinueNegativeTimeout(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer srv.Close()
	tr := &client.Transport{ExpectContinueTimeout: -1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for i := range 3 {
		req, _ := http.NewRequest("PUT", srv.URL, strings.NewReader("the body"))
		req.Header.Set("Expect", "100-continue")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "the body" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, b)
		}
	}
	if n := requests.Load(); n != 3 {
		t.Fatalf("the server saw %d requests, want 3", n)
	}
}
