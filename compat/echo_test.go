package compat_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

type echoUser struct {
	ID   string `param:"id" json:"id,omitempty"`
	Name string `json:"name" form:"name" query:"name"`
	Age  int    `json:"age" form:"age" query:"age"`
}

// echoServer is a small echo API: path parameters, a wildcard, a group
// with its own middleware, binding from JSON, forms and queries, Recover
// turning a panic into a 500, and BodyLimit on one route.
func echoServer() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error { return err },
	}))
	e.GET("/users/:id", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"id": c.Param("id"), "path": c.Path()})
	})
	e.GET("/static/*", func(c echo.Context) error { return c.String(http.StatusOK, "static="+c.Param("*")) })
	e.GET("/panic", func(c echo.Context) error { panic("boom") })
	api := e.Group("/api", func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Set("X-API-Version", "1")
			return next(c)
		}
	})
	api.GET("/users", func(c echo.Context) error {
		var u echoUser
		if err := c.Bind(&u); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, u)
	})
	api.POST("/users/:id", func(c echo.Context) error {
		var u echoUser
		if err := c.Bind(&u); err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, u)
	})
	api.POST("/limited", func(c echo.Context) error {
		var u echoUser
		if err := c.Bind(&u); err != nil {
			return err
		}
		return c.String(http.StatusOK, "accepted "+u.Name)
	}, middleware.BodyLimit("1K"))
	return e
}

type echoRequest struct {
	method, path, contentType, body string
	chunked                         bool // send the body with unknown length
	wantStatus                      int
	wantBody                        string // a substring
}

var bigName = strings.Repeat("n", 4<<10)

var echoRequests = []echoRequest{
	{method: "GET", path: "/users/42", wantStatus: 200, wantBody: `{"id":"42","path":"/users/:id"}`},
	{method: "GET", path: "/static/css/site.css", wantStatus: 200, wantBody: `static=css/site.css`},
	{method: "GET", path: "/api/users?name=ada&age=36", wantStatus: 200, wantBody: `{"name":"ada","age":36}`},
	{method: "GET", path: "/api/users?age=old", wantStatus: 400, wantBody: `"message":"strconv.ParseInt`},
	{method: "POST", path: "/api/users/7", contentType: "application/json", body: `{"name":"ada","age":36}`,
		wantStatus: 201, wantBody: `{"id":"7","name":"ada","age":36}`},
	{method: "POST", path: "/api/users/7", contentType: "application/x-www-form-urlencoded", body: "name=bob&age=7",
		wantStatus: 201, wantBody: `{"id":"7","name":"bob","age":7}`},
	{method: "POST", path: "/api/users/7", contentType: "application/json", body: `{"name":`,
		wantStatus: 400, wantBody: `"message":"unexpected EOF"`},
	{method: "POST", path: "/api/users/7", contentType: "application/json", body: `{"name":"x"}`, chunked: true,
		wantStatus: 201, wantBody: `{"id":"7","name":"x","age":0}`},
	{method: "POST", path: "/api/limited", contentType: "application/json", body: `{"name":"small"}`,
		wantStatus: 200, wantBody: `accepted small`},
	{method: "POST", path: "/api/limited", contentType: "application/json", body: `{"name":"` + bigName + `"}`,
		wantStatus: 413, wantBody: `{"message":"Request Entity Too Large"}`},
	{method: "POST", path: "/api/limited", contentType: "application/json", body: `{"name":"` + bigName + `"}`, chunked: true,
		wantStatus: 413, wantBody: `{"message":"Request Entity Too Large"}`},
	{method: "GET", path: "/panic", wantStatus: 500, wantBody: `{"message":"Internal Server Error"}`},
	{method: "DELETE", path: "/users/42", wantStatus: 405, wantBody: `{"message":"Method Not Allowed"}`},
	{method: "GET", path: "/nowhere", wantStatus: 404, wantBody: `{"message":"Not Found"}`},
	{method: "GET", path: "/users/1", wantStatus: 200, wantBody: `{"id":"1","path":"/users/:id"}`},
}

// TestEcho serves an echo API on both engines: routing, binding with its
// errors, group middleware, Recover, BodyLimit answering 413 to a body
// over its limit (declared or chunked), 404 and 405, with the same
// statuses, headers and bodies on both, on one keep-alive client.
func TestEcho(t *testing.T) {
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, echoServer())
			c := newClient(t)
			for _, rq := range echoRequests {
				var body io.Reader = strings.NewReader(rq.body)
				if rq.chunked {
					body = io.MultiReader(body) // no length: chunked
				}
				req, err := http.NewRequest(rq.method, base+rq.path, body)
				if err != nil {
					t.Fatal(err)
				}
				if rq.body == "" {
					req.Body = http.NoBody
				}
				if rq.contentType != "" {
					req.Header.Set("Content-Type", rq.contentType)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", rq.method, rq.path, err)
					obs.add(e.name, "%s %s chunked=%v → error %s", rq.method, rq.path, rq.chunked, errString(err))
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != rq.wantStatus || !bytes.Contains(got, []byte(rq.wantBody)) || err != nil {
					t.Errorf("%s %s chunked=%v: %d %q (%v), want %d and %q", rq.method, rq.path, rq.chunked,
						resp.StatusCode, got, err, rq.wantStatus, rq.wantBody)
				}
				obs.add(e.name, "%s %s chunked=%v → %d Content-Type=%q Allow=%q X-API-Version=%q close=%v %q",
					rq.method, rq.path, rq.chunked, resp.StatusCode, resp.Header.Get("Content-Type"),
					resp.Header.Get("Allow"), resp.Header.Get("X-API-Version"), resp.Close, got)
			}
		})
	}
	obs.compare(t, "responses")
}

// TestEchoStream streams JSON lines from an echo handler with
// c.Response().Flush(), as a progress feed does: each line must reach the
// client before the next is written.
func TestEchoStream(t *testing.T) {
	const lines = 5
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			next := make(chan struct{}, lines)
			handlerDone := make(chan string, 1)
			srv := echoServer()
			srv.GET("/progress", func(c echo.Context) error {
				sent := 0
				defer func() { handlerDone <- fmt.Sprintf("handler sent %d lines", sent) }()
				c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
				c.Response().WriteHeader(http.StatusOK)
				for i := range lines {
					if i > 0 {
						select {
						case <-next:
						case <-time.After(5 * time.Second):
							return fmt.Errorf("the client never got line %d", i-1)
						}
					}
					if err := c.JSON(0, map[string]int{"step": i}); err != nil {
						return err
					}
					c.Response().Flush()
					sent++
				}
				return nil
			})
			base := e.serve(t, srv)
			resp, err := newClient(t).Get(base + "/progress")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			obs.add(e.name, "status %d Content-Type=%q Content-Length=%d Transfer-Encoding=%q",
				resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength, resp.TransferEncoding)
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					obs.add(e.name, "stream ended: %s (partial %q)", errString(err), line)
					break
				}
				obs.add(e.name, "line %q", line)
				next <- struct{}{}
			}
			select {
			case s := <-handlerDone:
				obs.add(e.name, "%s", s)
			case <-time.After(5 * time.Second):
				t.Error("the handler did not return")
			}
			if got := strings.Join(obs[e.name], "\n"); !strings.Contains(got, `line "{\"step\":4}\n"`) ||
				!strings.Contains(got, "handler sent 5 lines") {
				t.Errorf("stream incomplete:\n%s", got)
			}
		})
	}
	obs.compare(t, "stream")
}
