package compat_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func init() { gin.SetMode(gin.ReleaseMode) } // no route listing on stdout

type ginUser struct {
	Name string `json:"name" binding:"required"`
	Age  int    `json:"age" binding:"gte=0,lte=150"`
}

// ginRouter is a small gin API: path parameters, a wildcard, query
// parameters, a group with its own middleware, JSON binding with
// validation, gin's 404 and 405, and Recovery turning a panic into a 500.
func ginRouter() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(gin.RecoveryWithWriter(io.Discard))
	r.GET("/users/:id", func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "route": c.FullPath()})
	})
	r.GET("/files/*path", func(c *gin.Context) { c.String(http.StatusOK, "file=%s", c.Param("path")) })
	r.GET("/search", func(c *gin.Context) {
		c.String(http.StatusOK, "q=%s page=%s tags=%v", c.Query("q"), c.DefaultQuery("page", "1"), c.QueryArray("tag"))
	})
	r.GET("/panic", func(c *gin.Context) { panic("boom") })
	api := r.Group("/api/v1", func(c *gin.Context) {
		c.Header("X-API-Version", "1")
		c.Next()
	})
	api.POST("/users", func(c *gin.Context) {
		var u ginUser
		if err := c.ShouldBindJSON(&u); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		c.Header("Location", "/api/v1/users/"+u.Name)
		c.JSON(http.StatusCreated, u)
	})
	api.PUT("/users/:id", func(c *gin.Context) {
		var form struct {
			Email string `form:"email" binding:"required,email"`
		}
		if err := c.ShouldBind(&form); err != nil {
			c.AbortWithStatusJSON(http.StatusUnprocessableEntity, gin.H{"error": err.Error()})
			return
		}
		c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "email": form.Email})
	})
	return r
}

type ginRequest struct {
	method, path, contentType, body string
	wantStatus                      int
	wantBody                        string // a substring
}

var ginRequests = []ginRequest{
	{method: "GET", path: "/users/42", wantStatus: 200, wantBody: `{"id":"42","route":"/users/:id"}`},
	{method: "GET", path: "/users/a%20b", wantStatus: 200, wantBody: `{"id":"a b","route":"/users/:id"}`},
	{method: "GET", path: "/files/a/b/c.txt", wantStatus: 200, wantBody: `file=/a/b/c.txt`},
	{method: "GET", path: "/search?q=lamp&tag=x&tag=y", wantStatus: 200, wantBody: `q=lamp page=1 tags=[x y]`},
	{method: "POST", path: "/api/v1/users", contentType: "application/json", body: `{"name":"ada","age":36}`,
		wantStatus: 201, wantBody: `{"name":"ada","age":36}`},
	{method: "POST", path: "/api/v1/users", contentType: "application/json", body: `{"age":36}`,
		wantStatus: 400, wantBody: `Field validation for 'Name' failed on the 'required' tag`},
	{method: "POST", path: "/api/v1/users", contentType: "application/json", body: `{"name":"old","age":200}`,
		wantStatus: 400, wantBody: `failed on the 'lte' tag`},
	{method: "POST", path: "/api/v1/users", contentType: "application/json", body: `{"name":`,
		wantStatus: 400, wantBody: `unexpected EOF`},
	{method: "PUT", path: "/api/v1/users/7", contentType: "application/x-www-form-urlencoded", body: "email=ada%40example.com",
		wantStatus: 200, wantBody: `{"email":"ada@example.com","id":"7"}`},
	{method: "PUT", path: "/api/v1/users/7", contentType: "application/x-www-form-urlencoded", body: "email=nope",
		wantStatus: 422, wantBody: `failed on the 'email' tag`},
	{method: "DELETE", path: "/users/42", wantStatus: 405, wantBody: `405 method not allowed`},
	{method: "GET", path: "/nowhere", wantStatus: 404, wantBody: `404 page not found`},
	{method: "GET", path: "/panic", wantStatus: 500, wantBody: ``},
	{method: "GET", path: "/users/1", wantStatus: 200, wantBody: `{"id":"1","route":"/users/:id"}`}, // after the panic
}

// TestGin serves a gin router on both engines: path and query
// parameters, JSON and form binding with validation errors, a group's
// middleware, 404, 405 and a recovered panic, with the same statuses,
// headers and bodies on both.
func TestGin(t *testing.T) {
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, ginRouter())
			c := newClient(t)
			for _, rq := range ginRequests {
				req, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
				if err != nil {
					t.Fatal(err)
				}
				if rq.contentType != "" {
					req.Header.Set("Content-Type", rq.contentType)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", rq.method, rq.path, err)
					obs.add(e.name, "%s %s → error %s", rq.method, rq.path, errString(err))
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != rq.wantStatus || !bytes.Contains(body, []byte(rq.wantBody)) || err != nil {
					t.Errorf("%s %s: %d %q (%v), want %d and %q", rq.method, rq.path, resp.StatusCode, body, err, rq.wantStatus, rq.wantBody)
				}
				obs.add(e.name, "%s %s → %d Content-Type=%q Allow=%q X-API-Version=%q Location=%q %q",
					rq.method, rq.path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"),
					resp.Header.Get("X-API-Version"), resp.Header.Get("Location"), body)
			}
		})
	}
	obs.compare(t, "responses")
}

// readEvent reads one server-sent event: its lines up to the blank line
// that ends it.
func readEvent(br *bufio.Reader) (string, error) {
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return strings.Join(append(lines, line), "|"), err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return strings.Join(lines, "|"), nil
		}
		lines = append(lines, line)
	}
}

// TestGinStream is a gin handler pushing server-sent events with
// c.Stream and c.SSEvent, as a live feed does: each event must reach the
// client before the next is written (the handler writes event i+1 only
// when the client says it has event i), and the stream must end cleanly.
func TestGinStream(t *testing.T) {
	const events = 5
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			next := make(chan struct{}, events)
			handlerDone := make(chan string, 1)
			r := ginRouter()
			r.GET("/events", func(c *gin.Context) {
				sent, waited := 0, ""
				defer func() {
					if p := recover(); p != nil {
						handlerDone <- fmt.Sprintf("handler panicked: %v", p)
						panic(p)
					}
					handlerDone <- fmt.Sprintf("handler sent %d events%s", sent, waited)
				}()
				c.Stream(func(w io.Writer) bool {
					if sent > 0 {
						select {
						case <-next:
						case <-time.After(5 * time.Second):
							waited = fmt.Sprintf("; the client never got event %d", sent-1)
							return false
						}
					}
					c.SSEvent("tick", fmt.Sprintf("event %d", sent))
					sent++
					return sent < events
				})
			})
			base := e.serve(t, r)
			resp, err := newClient(t).Get(base + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			obs.add(e.name, "status %d Content-Type=%q Cache-Control=%q Content-Length=%d Transfer-Encoding=%q",
				resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"),
				resp.ContentLength, resp.TransferEncoding)
			br := bufio.NewReader(resp.Body)
			for {
				ev, err := readEvent(br)
				if err != nil {
					obs.add(e.name, "stream ended: %s (partial %q)", errString(err), ev)
					break
				}
				obs.add(e.name, "event %q", ev)
				next <- struct{}{}
			}
			select {
			case s := <-handlerDone:
				obs.add(e.name, "%s", s)
			case <-time.After(5 * time.Second):
				t.Error("the handler did not return")
			}
			want := []string{
				`event "event:tick|data:event 0"`, `event "event:tick|data:event 4"`,
				`stream ended: EOF (partial "")`, `handler sent 5 events`,
			}
			for _, w := range want {
				if !strings.Contains(strings.Join(obs[e.name], "\n"), w) {
					t.Errorf("no %s in:\n%s", w, strings.Join(obs[e.name], "\n"))
				}
			}
		})
	}
	obs.compare(t, "stream")
}

// TestGinSSEvent renders events with c.SSEvent outside c.Stream, strings
// and JSON data, as a handler answering with a short event list does.
func TestGinSSEvent(t *testing.T) {
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			r := ginRouter()
			r.GET("/sse", func(c *gin.Context) {
				c.SSEvent("hello", "world")
				c.SSEvent("data", gin.H{"n": 1})
				c.SSEvent("", "multi\nline")
			})
			base := e.serve(t, r)
			resp, err := newClient(t).Get(base + "/sse")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := "event:hello\ndata:world\n\nevent:data\ndata:{\"n\":1}\n\ndata:multi\ndata:line\n\n"
			if string(body) != want || err != nil {
				t.Errorf("body %q (%v), want %q", body, err, want)
			}
			obs.add(e.name, "%d Content-Type=%q Cache-Control=%q Content-Length=%d %q",
				resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), resp.ContentLength, body)
		})
	}
	obs.compare(t, "response")
}

// TestGinStreamClientGone is a gin stream whose client goes away after
// the first event: c.Request.Context() must be canceled, so the handler
// stops instead of streaming to nobody.
func TestGinStreamClientGone(t *testing.T) {
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			handlerDone := make(chan string, 1)
			r := ginRouter()
			r.GET("/forever", func(c *gin.Context) {
				sent := 0
				ctx := c.Request.Context()
				defer func() {
					if p := recover(); p != nil {
						handlerDone <- fmt.Sprintf("handler panicked: %v", p)
						panic(p)
					}
					handlerDone <- fmt.Sprintf("handler stopped after %d event(s), context: %v, cause: %v",
						sent, ctx.Err(), context.Cause(ctx))
				}()
				c.Stream(func(w io.Writer) bool {
					if sent > 0 {
						select {
						case <-ctx.Done():
							return false
						case <-time.After(5 * time.Second):
							return false
						}
					}
					c.SSEvent("tick", sent)
					sent++
					return true
				})
			})
			base := e.serve(t, r)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/forever", nil)
			resp, err := newClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := readEvent(bufio.NewReader(resp.Body))
			obs.add(e.name, "status %d, first event %q (%v)", resp.StatusCode, ev, errString(err))
			cancel() // the client leaves: the Transport closes the connection (resets the stream on HTTP/2)
			resp.Body.Close()
			select {
			case s := <-handlerDone:
				obs.add(e.name, "%s", s)
				if want := "handler stopped after 1 event(s), context: context canceled"; !strings.HasPrefix(s, want) {
					t.Errorf("%s, want %s", s, want)
				}
			case <-time.After(8 * time.Second):
				t.Error("the handler did not return")
			}
		})
	}
	obs.compare(t, "client gone")
}

// multipartUpload is a multipart/form-data body with a note field and a
// file of n pattern bytes, streamed, with its length known up front as a
// browser sends it.
func multipartUpload(n int64) (body io.Reader, contentType string, length int64) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	mw.SetBoundary("compat-upload-boundary")
	mw.WriteField("note", "holiday photos")
	mw.CreateFormFile("file", "big.bin")
	prefix := bytes.Clone(head.Bytes())
	head.Reset()
	mw.Close()
	suffix := head.Bytes()
	return io.MultiReader(bytes.NewReader(prefix), newPattern(n), bytes.NewReader(suffix)),
		mw.FormDataContentType(), int64(len(prefix)) + n + int64(len(suffix))
}

// TestGinMultipartUpload posts a 20 MB file to a gin handler that takes
// it with c.FormFile and hashes it, as an upload form's handler does.
// Both engines must accept it whole, and leave no temporary file behind
// (net/http removes Request.MultipartForm's files after the handler).
func TestGinMultipartUpload(t *testing.T) {
	const size = 20 << 20
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where multipart puts the file's parts past MaxMultipartMemory
			r := ginRouter()
			r.MaxMultipartMemory = 1 << 20
			r.POST("/upload", func(c *gin.Context) {
				fh, err := c.FormFile("file")
				if err != nil {
					c.String(http.StatusBadRequest, "FormFile: %v", err)
					return
				}
				f, err := fh.Open()
				if err != nil {
					c.String(http.StatusInternalServerError, "Open: %v", err)
					return
				}
				defer f.Close()
				sum, n, err := hashStream(f)
				c.String(http.StatusOK, "note=%q file=%s size=%d read=%d sha256=%s err=%v",
					c.PostForm("note"), fh.Filename, fh.Size, n, sum, err)
			})
			base := e.serve(t, r)
			body, ct, length := multipartUpload(size)
			req, _ := http.NewRequest("POST", base+"/upload", body)
			req.Header.Set("Content-Type", ct)
			req.ContentLength = length
			resp, err := newClientTimeout(t, 30*time.Second).Do(req)
			if err != nil {
				obs.add(e.name, "error %s", errString(err))
				t.Fatalf("upload: %v", err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := fmt.Sprintf(`note="holiday photos" file=big.bin size=%d read=%d sha256=%s err=<nil>`, size, size, patternSum(size))
			if resp.StatusCode != 200 || string(got) != want {
				t.Errorf("%d %q (%v), want 200 %q", resp.StatusCode, got, err, want)
			}
			obs.add(e.name, "%d %q", resp.StatusCode, got)
			left := func() []string {
				entries, _ := os.ReadDir(tmp)
				var names []string
				for _, en := range entries {
					names = append(names, en.Name())
				}
				return names
			}
			deadline := time.Now().Add(2 * time.Second)
			for len(left()) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if l := left(); len(l) > 0 {
				if e.name == "net/http" && netHTTPKeepsMultipartFiles {
					t.Logf("temporary files left after the request by net/http's HTTP/2 server on %s (a known difference): %q", runtime.Version(), l)
				} else {
					t.Errorf("temporary files left after the request: %q", l)
				}
			}
			obs.add(e.name, "temporary files left: %d", len(left()))
		})
	}
	obs.compare(t, "upload")
}
