package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A big file download the client cancels part-way while three others
// run on the same connection: the canceled handler's io.Copy returns
// with an error, the others complete byte for byte, and the connection
// goes on serving. (TestNativeH2FileConnectionLost closes the whole
// connection under downloads.)
func TestNativeH2FileDownloadCanceled(t *testing.T) {
	data := make([]byte, 8<<20)
	rand.Read(data)
	path := fileOf(t, data)
	done := make(chan error, 8)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/small" {
			io.WriteString(w, "alive")
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		done <- sendFile(w, path)
	})
	forH2Engine(t, h, func(t *testing.T, base string, c *http.Client) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/big", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var others []*http.Response
		for range 3 {
			r2, err := c.Get(base + "/big")
			if err != nil {
				t.Fatal(err)
			}
			others = append(others, r2)
		}
		if _, err := io.CopyN(io.Discard, resp.Body, 1<<20); err != nil {
			t.Fatal(err)
		}
		cancel()
		resp.Body.Close()
		if err := waitErr(t, done); err == nil {
			t.Error("the canceled download's io.Copy reported no error")
		}
		for _, r2 := range others {
			b, err := io.ReadAll(r2.Body)
			r2.Body.Close()
			if err != nil || !bytes.Equal(b, data) {
				t.Errorf("a download beside the canceled one: %d bytes, %v", len(b), err)
			}
			if err := waitErr(t, done); err != nil {
				t.Errorf("a completed download's io.Copy: %v", err)
			}
		}
		resp, b := mustDo(t, c, mustRequest(t, "GET", base+"/small"))
		if resp.StatusCode != 200 || string(b) != "alive" {
			t.Fatalf("after the canceled download: %d %q", resp.StatusCode, b)
		}
	})
}

// fileOf writes data to a new file in the test's directory and returns
// its path.
func fileOf(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sendFile is a handler's io.Copy of the file at path into w.
func sendFile(w http.ResponseWriter, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// waitErr waits for a handler's result.
func waitErr(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("a handler's io.Copy of a file did not return")
		return nil
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
