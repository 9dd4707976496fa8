package compat_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// fileModTime is the modification time of every served file, so that
// Last-Modified and the conditional requests are the same run to run.
var fileModTime = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

const (
	fileDataSize = 1000
	fileBigSize  = 50 << 20
)

// fileData is data.txt's content: 1000 printable bytes.
var fileData = func() []byte {
	b := make([]byte, fileDataSize)
	for i := range b {
		b[i] = 'a' + byte(i%26)
		if i%50 == 49 {
			b[i] = '\n'
		}
	}
	return b
}()

// fileTree writes the served directory: data.txt, a directory with an
// index.html, one without, and a 50 MB big.bin, all with fileModTime.
func fileTree(t *testing.T) string {
	dir := t.TempDir()
	files := map[string][]byte{
		"data.txt":         fileData,
		"site/index.html":  []byte("<h1>site index</h1>\n"),
		"site/about.html":  []byte("<p>about</p>\n"),
		"plain/a.txt":      []byte("a\n"),
		"plain/b.json":     []byte(`{"b":1}`),
		"plain/sub/c.html": []byte("c"),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, newPattern(fileBigSize)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		return os.Chtimes(p, fileModTime, fileModTime)
	})
	return dir
}

// fileHandler serves dir with http.FileServer under /files/, and
// data.txt with http.ServeContent and an ETag at /content, as an
// application serving blobs from a store does.
func fileHandler(dir string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/files/", http.StripPrefix("/files", http.FileServer(http.Dir(dir))))
	mux.HandleFunc("/content", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Cache-Control", "max-age=60")
		http.ServeContent(w, r, "data.txt", fileModTime, bytes.NewReader(fileData))
	})
	return mux
}

type fileRequest struct {
	method, path string
	header       map[string]string
	wantStatus   int
}

var (
	lastModified = fileModTime.Format(http.TimeFormat)
	before       = fileModTime.Add(-time.Hour).Format(http.TimeFormat)
)

var fileRequests = []fileRequest{
	{"GET", "/files/data.txt", nil, 200},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=0-9"}, 206},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=-5"}, 206},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=990-"}, 206},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=0-4,10-14,-3"}, 206},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=2000-"}, 416},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=5-2"}, 416},
	{"GET", "/files/data.txt", map[string]string{"Range": "pages=1"}, 416},
	{"GET", "/files/data.txt", map[string]string{"If-Modified-Since": lastModified}, 304},
	{"GET", "/files/data.txt", map[string]string{"If-Modified-Since": before}, 200},
	{"GET", "/files/data.txt", map[string]string{"If-Unmodified-Since": before}, 412},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=0-9", "If-Range": lastModified}, 206},
	{"GET", "/files/data.txt", map[string]string{"Range": "bytes=0-9", "If-Range": before}, 200},
	{"GET", "/content", nil, 200},
	{"GET", "/content", map[string]string{"If-None-Match": `"v1"`}, 304},
	{"GET", "/content", map[string]string{"If-None-Match": `"v0", W/"v1"`}, 304},
	{"GET", "/content", map[string]string{"If-None-Match": `"v0"`}, 200},
	{"GET", "/content", map[string]string{"If-Match": `"v0"`}, 412},
	{"GET", "/content", map[string]string{"Range": "bytes=100-119", "If-Range": `"v1"`}, 206},
	{"GET", "/content", map[string]string{"Range": "bytes=100-119", "If-Range": `"v0"`}, 200},
	{"HEAD", "/files/data.txt", nil, 200},
	{"HEAD", "/files/data.txt", map[string]string{"Range": "bytes=0-9"}, 206},
	{"HEAD", "/content", map[string]string{"If-None-Match": `"v1"`}, 304},
	{"GET", "/files/site", nil, 301},
	{"GET", "/files/site/", nil, 200},
	{"GET", "/files/site/index.html", nil, 301},
	{"GET", "/files/site/about.html", nil, 200},
	{"GET", "/files/plain/", nil, 200},
	{"GET", "/files/missing.txt", nil, 404},
	{"GET", "/files/../data.txt", nil, 307},
	{"GET", "/files/big.bin", map[string]string{"Range": "bytes=30000000-30000099"}, 206},
	{"GET", "/files/big.bin", nil, 200},
}

var boundaryRE = regexp.MustCompile(`[0-9a-f]{60}`)

// TestFileServer serves a directory with http.FileServer and a blob
// with http.ServeContent on both engines: single, multiple, suffix and
// unsatisfiable ranges, the conditional headers (If-None-Match,
// If-Modified-Since, If-Range, If-Match, If-Unmodified-Since), HEAD, the
// directory redirect, index.html and directory listings, and a 50 MB
// file downloaded whole and hashed. Same statuses, headers and bodies on
// both.
func TestFileServer(t *testing.T) {
	dir := fileTree(t)
	bigSum := patternSum(fileBigSize)
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, fileHandler(dir))
			c := newClientTimeout(t, 30*time.Second)
			for _, rq := range fileRequests {
				req, _ := http.NewRequest(rq.method, base+rq.path, nil)
				for k, v := range rq.header {
					req.Header.Set(k, v)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("%s %s %v: %v", rq.method, rq.path, rq.header, err)
					obs.add(e.name, "%s %s %v → error %s", rq.method, rq.path, rq.header, errString(err))
					continue
				}
				body, n, sum, err := describeBody(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != rq.wantStatus || err != nil {
					t.Errorf("%s %s %v: %d (%v), want %d", rq.method, rq.path, rq.header, resp.StatusCode, err, rq.wantStatus)
				}
				if rq.path == "/files/big.bin" && rq.wantStatus == 200 && (n != fileBigSize || sum != bigSum) {
					t.Errorf("big.bin: %s, want %d bytes, sha256 %s", body, fileBigSize, bigSum)
				}
				ct := boundaryRE.ReplaceAllString(resp.Header.Get("Content-Type"), "BOUNDARY")
				obs.add(e.name, "%s %s %v → %d Content-Type=%q Content-Length=%q Content-Range=%q Accept-Ranges=%q "+
					"Last-Modified=%q ETag=%q Cache-Control=%q Location=%q, %s, error %s",
					rq.method, rq.path, rq.header, resp.StatusCode, ct, resp.Header.Get("Content-Length"),
					resp.Header.Get("Content-Range"), resp.Header.Get("Accept-Ranges"), resp.Header.Get("Last-Modified"),
					resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"), resp.Header.Get("Location"), body, errString(err))
			}
		})
	}
	obs.compare(t, "responses")
}

// describeBody reads a body to its end and describes it: quoted when
// short, by length and hash when long, with multipart boundaries (random
// per response) replaced by BOUNDARY.
func describeBody(r io.Reader) (desc string, n int64, sum string, err error) {
	head := make([]byte, 4096)
	k, err := io.ReadFull(r, head)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		b := boundaryRE.ReplaceAll(head[:k], []byte("BOUNDARY"))
		s, _, _ := hashStream(bytes.NewReader(b))
		if k <= 200 {
			return fmt.Sprintf("%d bytes %q", k, b), int64(k), s, nil
		}
		return fmt.Sprintf("%d bytes, sha256 %s, starting %q", k, s, b[:60]), int64(k), s, nil
	}
	sum, n, err = hashStream(io.MultiReader(bytes.NewReader(head[:k]), r))
	return fmt.Sprintf("%d bytes, sha256 %s", n, sum), n, sum, err
}
