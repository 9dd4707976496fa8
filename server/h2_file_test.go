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

// File bodies over the native HTTP/2 engine: http.FileServer's whole
// files and ranges, a HEAD, and a handler's own io.Copy from a file at
// an offset with the Content-Type left to sniffing. Over h2c on Linux
// they go out by reference to the mapped file (h2_file_linux.go); over
// TLS they are copied. The bytes must be the same either way.
func TestNativeH2FileBodies(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 5<<20+123)
	rand.Read(data)
	copy(data[777:], "<!DOCTYPE html><html>") // sniffed as text/html
	path := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(dir))
	offsets := make(chan int64, 1)
	mux := http.NewServeMux()
	mux.Handle("/files/", http.StripPrefix("/files", files))
	mux.HandleFunc("/copy", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		f.Seek(777, io.SeekStart)
		n, err := io.Copy(w, f)
		if err != nil || n != int64(len(data)-777) {
			t.Errorf("io.Copy: %d, %v; want %d", n, err, len(data)-777)
		}
		at, _ := f.Seek(0, io.SeekCurrent)
		offsets <- at
	})
	forNativeH2(t, mux, func(t *testing.T, base string, c *http.Client) {
		before := mappedBytes()
		for _, tc := range []struct {
			name, rng string
			want      []byte
		}{
			{"whole", "", data},
			{"range", "bytes=1000-3000000", data[1000:3000001]},
			{"tail from a page boundary", "bytes=4096-", data[4096:]},
		} {
			req, _ := http.NewRequest("GET", base+"/files/big.bin", nil)
			if tc.rng != "" {
				req.Header.Set("Range", tc.rng)
			}
			resp, b := mustDo(t, c, req)
			if !bytes.Equal(b, tc.want) {
				t.Errorf("%s: status %d, %d bytes differ from the file's %d", tc.name, resp.StatusCode, len(b), len(tc.want))
			}
			if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(tc.want)) {
				t.Errorf("%s: Content-Length %q, want %d", tc.name, cl, len(tc.want))
			}
		}
		req, _ := http.NewRequest("HEAD", base+"/files/big.bin", nil)
		if resp, b := mustDo(t, c, req); len(b) != 0 || resp.ContentLength != int64(len(data)) {
			t.Errorf("HEAD: %d body bytes, Content-Length %d", len(b), resp.ContentLength)
		}
		req, _ = http.NewRequest("GET", base+"/copy", nil)
		resp, b := mustDo(t, c, req)
		if !bytes.Equal(b, data[777:]) {
			t.Errorf("io.Copy from an offset: %d bytes differ from the file's %d", len(b), len(data)-777)
		}
		if ct, want := resp.Header.Get("Content-Type"), http.DetectContentType(data[777:777+512]); ct != want {
			t.Errorf("sniffed Content-Type %q, want %q", ct, want)
		}
		if at := <-offsets; at != int64(len(data)) {
			t.Errorf("the file's offset after io.Copy is %d, want %d (its end)", at, len(data))
		}
		checkMapped(t, base, mappedBytes()-before)
	})
}

// The native API's file bodies over HTTP/2: SendFile with the length
// declared, io.Copy of a file from an offset, and io.CopyN past the
// declared length (the declared bytes are sent, the handler gets an
// error, as with Write).
func TestNativeAPIH2FileBodies(t *testing.T) {
	data := make([]byte, 3<<20+5)
	rand.Read(data)
	path := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	h := func(c *Ctx) {
		f, err := os.Open(path)
		if err != nil {
			errs <- err
			return
		}
		defer f.Close()
		switch string(c.Path()) {
		case "/sendfile":
			f.Seek(100, io.SeekStart)
			errs <- c.SendFile(f, int64(len(data)-200))
		case "/copy":
			c.SetContentType("application/octet-stream")
			_, err = io.Copy(c, f)
			errs <- err
		case "/overlong":
			c.SetContentLength(1 << 20)
			_, err = io.CopyN(c, f, 2<<20)
			errs <- err
		}
	}
	for _, cleartext := range []bool{false, true} {
		t.Run(map[bool]string{false: "tls", true: "h2c"}[cleartext], func(t *testing.T) {
			s := &Server{Native: h, ErrorLog: discardLog}
			base, _, c := startH2Both(t, s, cleartext)
			before := mappedBytes()
			for path, want := range map[string][]byte{"/sendfile": data[100 : len(data)-100], "/copy": data} {
				req, _ := http.NewRequest("GET", base+path, nil)
				resp, b := mustDo(t, c, req)
				if err := <-errs; err != nil {
					t.Errorf("%s: handler: %v", path, err)
				}
				if !bytes.Equal(b, want) {
					t.Errorf("%s: status %d, %d bytes differ from the file's %d", path, resp.StatusCode, len(b), len(want))
				}
			}
			checkMapped(t, base, mappedBytes()-before)
			req, _ := http.NewRequest("GET", base+"/overlong", nil)
			if _, b := mustDo(t, c, req); !bytes.Equal(b, data[:1<<20]) {
				t.Errorf("/overlong: %d bytes, want the declared %d of the file", len(b), 1<<20)
			}
			if err := <-errs; err == nil {
				t.Error("io.CopyN past the declared length: no error in the handler")
			}
		})
	}
}

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
	forNativeH2(t, h, func(t *testing.T, base string, c *http.Client) {
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
