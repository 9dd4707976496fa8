package client_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hotpathhq/hotpath/client"
)

// A server that answers before reading a large upload (413, 401): net/http
// reads the response while it writes and returns it; hotpath writes the
// whole body first and fails with the write error.
func TestEarlyResponseDuringUpload(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	defer srv.Close()
	big := bytes.Repeat([]byte("x"), 16<<20)
	for _, name := range []string{"net/http", "hotpath"} {
		var rt http.RoundTripper = &http.Transport{}
		if name == "hotpath" {
			rt = &client.Transport{}
		}
		req, _ := http.NewRequest("POST", srv.URL+"/upload", bytes.NewReader(big))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp.Body.Close()
		t.Logf("%s: %s", name, resp.Status)
	}
}
