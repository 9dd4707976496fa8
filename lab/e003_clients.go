package lab

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/hotpathhq/hotpath/client"
	"github.com/hotpathhq/hotpath/server"
	"github.com/imroc/req/v3"
	"github.com/valyala/fasthttp"
)

// Seed 003: GET, POST JSON, pooled and with-headers requests across
// net/http, resty v2, req v3, fasthttp and hotpath's client.Transport.

// httpClient is one client library under test. Each call hands the
// response body to use, which must not keep it (fasthttp reuses it).
type httpClient interface {
	Get(url string, use func([]byte) error) error
	PostJSON(url string, body []byte, use func([]byte) error) error
	GetWithHeaders(url string, h [][2]string, use func([]byte) error) error
	Close()
}

// clientArm names a client and builds it for a pool of conns connections.
type clientArm struct {
	Name, Code string
	New        func(conns int) httpClient
}

// clientArms are the clients 003-clients compares; the first is the
// baseline. A net/http RoundTripper (such as hotpath's client.Transport)
// is one entry: {Name, Code, func(n int) httpClient { return stdClient(rt(n)) }}.
var clientArms = []clientArm{
	{"net/http", "resp, err := client.Get(url)\ndefer resp.Body.Close()\nbody, _ := io.ReadAll(resp.Body)", func(n int) httpClient {
		t := newTransport(nil, nil)
		t.MaxIdleConnsPerHost = n
		return stdClient(t)
	}},
	{"resty v2", "resp, err := client.R().SetHeader(\"Authorization\", \"Bearer token\").Get(url)\nbody := resp.Body()", newRestyClient},
	{"req v3", "resp, err := client.R().Get(url)\nbody, _ := resp.ToBytes()", newReqClient},
	{"hotpath client.Transport", "client := &http.Client{Transport: &client.Transport{}}\nresp, err := client.Get(url)\ndefer resp.Body.Close()\nbody, _ := io.ReadAll(resp.Body)", func(n int) httpClient {
		return stdClient(&client.Transport{MaxIdleConnsPerHost: n})
	}},
	{"fasthttp", "req := fasthttp.AcquireRequest()\nresp := fasthttp.AcquireResponse()\ndefer fasthttp.ReleaseRequest(req)\ndefer fasthttp.ReleaseResponse(resp)\nreq.SetRequestURI(url)\nerr := client.Do(req, resp)\nbody := resp.Body()", newFastClient},
}

// stdClient wraps an http.RoundTripper in an http.Client.
func stdClient(rt http.RoundTripper) httpClient {
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

func newRestyClient(n int) httpClient {
	t := newTransport(nil, nil)
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

func newReqClient(n int) httpClient {
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

func newFastClient(n int) httpClient {
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

var (
	clientsGetBody = []byte(`{"message":"Hello, World!","items":[1,2,3,4,5,6,7,8]}`)
	clientsPost    = []byte(`{"user":"ada","email":"ada@example.com","roles":["admin","dev"],"active":true}`)
	clientsHeaders = [][2]string{{"Authorization", "Bearer token-123"}, {"User-Agent", "hotpath-lab/1"}, {"Accept", "application/json"}}
)

// clientsServer answers /get with a JSON body, echoes /post, and answers
// /headers with the three headers' values, so the response proves they
// were sent. It is hotpath's native server: no allocations per request.
func clientsServer(c *server.Ctx) {
	c.SetContentType("application/json")
	switch string(c.Path()) {
	case "/get":
		c.Write(clientsGetBody)
	case "/post":
		var buf [1024]byte
		b, err := c.ReadBody(buf[:0])
		if err != nil {
			c.Error(400, err.Error())
			return
		}
		c.Write(b)
	case "/headers":
		for _, kv := range clientsHeaders {
			c.Write(c.Header(kv[0]))
			c.Write([]byte("\n"))
		}
	default:
		c.Error(404, "not found\n")
	}
}

func clientsHeadersWant() string {
	var b strings.Builder
	for _, kv := range clientsHeaders {
		b.WriteString(kv[1] + "\n")
	}
	return b.String()
}

// clientScenario is one row of the seed's tables.
type clientScenario struct {
	name    string
	workers int // 1: sequential; more: the pooled scenario
	call    func(c httpClient, base string, use func([]byte) error) error
	want    string
	claims  map[string]Claim // by client name, vs net/http on ns/op
}

var clientScenarios = []clientScenario{
	{"GET", 1, func(c httpClient, b string, use func([]byte) error) error { return c.Get(b+"/get", use) }, string(clientsGetBody), map[string]Claim{
		"resty v2": {Quote: "38,126 → 41,738 ns/op (0.9×)", Ratio: 38126.0 / 41738},
		"req v3":   {Quote: "38,126 → 45,950 ns/op (0.8×)", Ratio: 38126.0 / 45950},
		"fasthttp": {Quote: "38,126 → 22,799 ns/op (1.7× faster)", Ratio: 38126.0 / 22799}}},
	{"POST JSON", 1, func(c httpClient, b string, use func([]byte) error) error {
		return c.PostJSON(b+"/post", clientsPost, use)
	}, string(clientsPost), map[string]Claim{
		"resty v2": {Quote: "40,100 → 45,939 ns/op (0.9×)", Ratio: 40100.0 / 45939},
		"req v3":   {Quote: "40,100 → 51,000 ns/op (0.8×)", Ratio: 40100.0 / 51000},
		"fasthttp": {Quote: "40,100 → 21,188 ns/op (1.9× faster)", Ratio: 40100.0 / 21188}}},
	{"pooled", 8, func(c httpClient, b string, use func([]byte) error) error { return c.Get(b+"/get", use) }, string(clientsGetBody), map[string]Claim{
		"resty v2": {Quote: "38,621 → 42,253 ns/op (0.9×)", Ratio: 38621.0 / 42253},
		"fasthttp": {Quote: "38,621 → 19,417 ns/op (2.0× faster)", Ratio: 38621.0 / 19417}}},
	{"headers", 1, func(c httpClient, b string, use func([]byte) error) error {
		return c.GetWithHeaders(b+"/headers", clientsHeaders, use)
	}, clientsHeadersWant(), map[string]Claim{
		"resty v2": {Quote: "40,171 → 43,736 ns/op (0.9×)", Ratio: 40171.0 / 43736},
		"fasthttp": {Quote: "40,171 → 19,531 ns/op (2.1× faster)", Ratio: 40171.0 / 19531}}},
}

func init() {
	registerServer("clients-native", hotpathServer(func() *server.Server { return &server.Server{Native: clientsServer} }))
	e := &Experiment{ID: "003-clients", Seed: "003", Title: "net/http vs resty vs req vs fasthttp vs hotpath clients"}
	e.Check = func(env *Env) error {
		h, err := env.startServer("clients-native")
		if err != nil {
			return err
		}
		defer h.Close()
		for _, ca := range clientArms {
			c := ca.New(8)
			for _, sc := range clientScenarios {
				if err := sc.call(c, h.URL(), sameBody(sc.want)); err != nil {
					c.Close()
					return fmt.Errorf("%s %s: %w", ca.Name, sc.name, err)
				}
			}
			c.Close()
		}
		return nil
	}
	e.Run = func(env *Env) (*Result, error) {
		h, err := env.startServer("clients-native")
		if err != nil {
			return nil, err
		}
		defer h.Close()
		r := newResult(e, microMetrics)
		type armRun struct {
			c   httpClient
			sc  clientScenario
			n   int
			op  func(int) error
			dcs *dialCounter
		}
		runs := map[*Arm]*armRun{}
		names := map[string]map[string]string{} // scenario → client → arm name
		for _, sc := range clientScenarios {
			names[sc.name] = map[string]string{}
			for _, ca := range clientArms {
				c := ca.New(max(2, sc.workers))
				defer c.Close()
				code := ""
				if sc.name == "GET" {
					code = ca.Code
				}
				a := newArm(sc.name+" · "+ca.Name, code)
				sc := sc
				use := sameBody(sc.want)
				do := func() error { return sc.call(c, h.URL(), use) }
				ar := &armRun{c: c, sc: sc, op: repeat(do), dcs: &dialCounter{}}
				if sc.workers == 1 {
					if ar.n, err = calibrate(ar.op, env.Budget.RunTime); err != nil {
						return nil, fmt.Errorf("%s: %w", a.Name, err)
					}
				} else if err := concurrentRun(env.ctx(), newArm("warm-up", ""), sc.workers, env.Budget.RunTime/2, ar.dcs, do); err != nil {
					return nil, fmt.Errorf("%s: %w", a.Name, err)
				}
				runs[a] = ar
				names[sc.name][ca.Name] = a.Name
				r.Arms = append(r.Arms, a)
			}
		}
		if err := env.measure(r, func(a *Arm, _ int) error {
			ar := runs[a]
			if ar.sc.workers > 1 {
				return concurrentRun(env.ctx(), a, ar.sc.workers, env.Budget.RunTime, ar.dcs, func() error { return ar.op(1) })
			}
			ns, b, allocs, err := timeOp(ar.op, ar.n)
			if err != nil {
				return err
			}
			a.record(NsPerOp.Name, ns)
			a.record(BytesPerOp.Name, b)
			a.record(AllocsPerOp.Name, allocs)
			return nil
		}); err != nil {
			return nil, err
		}
		base := clientArms[0].Name
		for _, sc := range clientScenarios {
			for _, ca := range clientArms[1:] {
				cl, ok := sc.claims[ca.Name]
				if !ok {
					cl = Claim{Quote: "not in the seed's table", Info: true}
				}
				r.compare(sc.name+": "+ca.Name, names[sc.name][base], names[sc.name][ca.Name], NsPerOp, cl)
			}
		}
		r.compare("GET allocations: fasthttp", names["GET"][base], names["GET"]["fasthttp"], AllocsPerOp, Claim{Quote: "68 → 1 allocs/op", Ratio: 68})
		r.compare("GET allocations: hotpath client.Transport", names["GET"][base], names["GET"]["hotpath client.Transport"], AllocsPerOp, Claim{Quote: "not in the seed (hotpath's own target: ≤ 15 allocs for the whole Do)", Info: true})
		r.Setup = "each client calls a hotpath native server over plain HTTP/1.1 keep-alive (GET: 52-byte JSON; POST: 80-byte JSON echoed; headers: Authorization, User-Agent, Accept echoed). Sequential calls except \"pooled\": 8 goroutines sharing one client with a pool of ≥ 8 connections. " + h.where() + clientFiguresNote(h) + "."
		r.SameWork = "every client gets the same body in every scenario: the JSON, the echoed POST body, and the three header values echoed by the server (so headers were really sent)."
		r.finish(explain(r, map[outcome]string{
			partlyAsClaimed: "fasthttp's lead is real but its size depends on what is counted; resty and req add their own allocations on top of net/http",
			asClaimed:       "the seed's ranking and ratios hold here",
			notAsClaimed:    "this machine does not see the seed's ratios",
		}))
		return r, nil
	}
	register(e)
}

// clientFiguresNote says whose allocations B/op and allocs/op count.
func clientFiguresNote(h *serverHandle) string {
	if h.Child {
		return "; B/op and allocs/op are this process's, so they are the client's alone (the seed's net/http figures likely included its in-process server's)"
	}
	return "; B/op and allocs/op include the in-process server's"
}

// sameBody returns a body check: the body must equal want.
func sameBody(want string) func([]byte) error {
	return func(b []byte) error {
		if string(b) != want {
			return fmt.Errorf("body %q, want %q", b, want)
		}
		return nil
	}
}
