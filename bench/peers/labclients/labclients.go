// Package labclients holds the HTTP client libraries that hotpath lab's
// 003-clients compares (net/http, resty v2, req v3, fasthttp and hotpath's
// client.Transport) behind one small interface. It lives in bench/peers'
// module so that the library's go.mod never depends on resty, req or
// fasthttp; the lab runs it in a child process (cmd/lab-clients).
package labclients

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/hotpathhq/hotpath/client"
	"github.com/imroc/req/v3"
	"github.com/valyala/fasthttp"
)

// Client is one client library under test. Each call hands the
// response body to use, which must not keep it (fasthttp reuses it).
type Client interface {
	Get(url string, use func([]byte) error) error
	PostJSON(url string, body []byte, use func([]byte) error) error
	GetWithHeaders(url string, h [][2]string, use func([]byte) error) error
	Close()
}

// Arm names a client and builds it for a pool of conns connections.
type Arm struct {
	Name, Code string
	New        func(conns int) Client
}

// Arms are the clients 003-clients compares; the first is the baseline.
// A net/http RoundTripper (such as hotpath's client.Transport) is one
// entry: {Name, Code, func(n int) Client { return stdClient(rt(n)) }}.
var Arms = []Arm{
	{"net/http", "resp, err := client.Get(url)\ndefer resp.Body.Close()\nbody, _ := io.ReadAll(resp.Body)", func(n int) Client {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = n
		return stdClient(t)
	}},
	{"resty v2", "resp, err := client.R().SetHeader(\"Authorization\", \"Bearer token\").Get(url)\nbody := resp.Body()", newRestyClient},
	{"req v3", "resp, err := client.R().Get(url)\nbody, _ := resp.ToBytes()", newReqClient},
	{"hotpath client.Transport", "client := &http.Client{Transport: &client.Transport{}}\nresp, err := client.Get(url)\ndefer resp.Body.Close()\nbody, _ := io.ReadAll(resp.Body)", func(n int) Client {
		return stdClient(&client.Transport{MaxIdleConnsPerHost: n})
	}},
	{"fasthttp", "req := fasthttp.AcquireRequest()\nresp := fasthttp.AcquireResponse()\ndefer fasthttp.ReleaseRequest(req)\ndefer fasthttp.ReleaseResponse(resp)\nreq.SetRequestURI(url)\nerr := client.Do(req, resp)\nbody := resp.Body()", newFastClient},
}

// stdClient wraps an http.RoundTripper in an http.Client.
func stdClient(rt http.RoundTripper) Client {
	return &netHTTPClient{c: &http.Client{Transport: rt, Timeout: 10 * time.Second}}
}

type netHTTPClient struct{ c *http.Client }

func (c *netHTTPClient) do(req *http.Request, err error, use func([]byte) error) error {
	if err != nil {
		return err
	}
	resp, err := c.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return use(b)
}

func (c *netHTTPClient) Get(url string, use func([]byte) error) error {
	req, err := http.NewRequest("GET", url, nil)
	return c.do(req, err, use)
}
func (c *netHTTPClient) PostJSON(url string, body []byte, use func([]byte) error) error {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.do(req, err, use)
}
func (c *netHTTPClient) GetWithHeaders(url string, h [][2]string, use func([]byte) error) error {
	req, err := http.NewRequest("GET", url, nil)
	if err == nil {
		for _, kv := range h {
			req.Header.Set(kv[0], kv[1])
		}
	}
	return c.do(req, err, use)
}
func (c *netHTTPClient) Close() { c.c.CloseIdleConnections() }

type restyClient struct{ c *resty.Client }

func newRestyClient(n int) Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = n
	return &restyClient{c: resty.NewWithClient(&http.Client{Transport: t, Timeout: 10 * time.Second})}
}

func restyBody(use func([]byte) error) func(*resty.Response, error) error {
	return func(r *resty.Response, err error) error {
		if err != nil {
			return err
		}
		return use(r.Body())
	}
}

func (c *restyClient) Get(url string, use func([]byte) error) error {
	return restyBody(use)(c.c.R().Get(url))
}
func (c *restyClient) PostJSON(url string, body []byte, use func([]byte) error) error {
	return restyBody(use)(c.c.R().SetHeader("Content-Type", "application/json").SetBody(body).Post(url))
}
func (c *restyClient) GetWithHeaders(url string, h [][2]string, use func([]byte) error) error {
	r := c.c.R()
	for _, kv := range h {
		r.SetHeader(kv[0], kv[1])
	}
	return restyBody(use)(r.Get(url))
}
func (c *restyClient) Close() { c.c.GetClient().CloseIdleConnections() }

type reqClient struct{ c *req.Client }

func newReqClient(n int) Client {
	c := req.C().SetTimeout(10 * time.Second)
	c.GetTransport().MaxIdleConnsPerHost = n
	return &reqClient{c: c}
}

func reqBody(use func([]byte) error) func(*req.Response, error) error {
	return func(r *req.Response, err error) error {
		if err != nil {
			return err
		}
		b, err := r.ToBytes()
		if err != nil {
			return err
		}
		return use(b)
	}
}

func (c *reqClient) Get(url string, use func([]byte) error) error {
	return reqBody(use)(c.c.R().Get(url))
}
func (c *reqClient) PostJSON(url string, body []byte, use func([]byte) error) error {
	return reqBody(use)(c.c.R().SetBodyJsonBytes(body).Post(url))
}
func (c *reqClient) GetWithHeaders(url string, h [][2]string, use func([]byte) error) error {
	r := c.c.R()
	for _, kv := range h {
		r.SetHeader(kv[0], kv[1])
	}
	return reqBody(use)(r.Get(url))
}
func (c *reqClient) Close() { c.c.CloseIdleConnections() }

// fastClient hands fasthttp's body to use before releasing the
// Response, which reuses it: no copy, as the seed's code.
type fastClient struct{ c *fasthttp.Client }

func newFastClient(n int) Client {
	return &fastClient{c: &fasthttp.Client{MaxConnsPerHost: max(n, 512), ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}}
}

func (c *fastClient) do(method, url string, body []byte, h [][2]string, use func([]byte) error) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	for _, kv := range h {
		req.Header.Set(kv[0], kv[1])
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if err := c.c.Do(req, resp); err != nil {
		return err
	}
	if resp.StatusCode() != 200 {
		return fmt.Errorf("status %d", resp.StatusCode())
	}
	return use(resp.Body())
}

func (c *fastClient) Get(url string, use func([]byte) error) error {
	return c.do("GET", url, nil, nil, use)
}
func (c *fastClient) PostJSON(url string, body []byte, use func([]byte) error) error {
	return c.do("POST", url, body, nil, use)
}
func (c *fastClient) GetWithHeaders(url string, h [][2]string, use func([]byte) error) error {
	return c.do("GET", url, nil, h, use)
}
func (c *fastClient) Close() { c.c.CloseIdleConnections() }

// Find returns the arm named name.
func Find(name string) (Arm, bool) {
	for _, a := range Arms {
		if a.Name == name {
			return a, true
		}
	}
	return Arm{}, false
}
