package clienttimeout

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ---- must flag ----

var shared = &http.Client{} // want `http.Client has no Timeout`

var valueClient = http.Client{Transport: http.DefaultTransport} // want `http.Client has no Timeout`

func get(u string) (*http.Response, error) {
	return http.Get(u) // want `http.Get sends with http.DefaultClient, which has no Timeout`
}

func head(u string) (*http.Response, error) {
	return http.Head(u) // want `http.Head sends with http.DefaultClient`
}

func post(u string, body io.Reader) (*http.Response, error) {
	return http.Post(u, "text/plain", body) // want `http.Post sends with http.DefaultClient`
}

func postForm(u string) (*http.Response, error) {
	return http.PostForm(u, url.Values{"a": {"b"}}) // want `http.PostForm sends with http.DefaultClient`
}

func defaultGet(u string) (*http.Response, error) {
	return http.DefaultClient.Get(u) // want `http.DefaultClient has no Timeout: if the server stops answering, Get waits forever`
}

func defaultDo(u string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return http.DefaultClient.Do(req) // want `http.DefaultClient has no Timeout: if the server stops answering, Do waits forever unless the request's context has a deadline`
}

func defaultDoBackground(u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), "GET", u, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req) // want `Do waits forever unless`
}

// The request's context comes from the caller: with or without a deadline,
// the client sets none (as a Client literal without Timeout would not).
func doWithCallerContext(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req) // want `Do waits forever unless`
}

func doRequestFromCaller(req *http.Request) (*http.Response, error) {
	return http.DefaultClient.Do(req) // want `Do waits forever unless`
}

func aliasGet(u string) (*http.Response, error) {
	c := http.DefaultClient
	return c.Get(u) // want `c \(http.DefaultClient\) has no Timeout`
}

func perCall(u string) (*http.Response, error) {
	c := &http.Client{ // want `http.Client has no Timeout`
		Transport: http.DefaultTransport,
	}
	return c.Get(u)
}

func zeroTimeout(u string) (*http.Response, error) {
	c := &http.Client{Timeout: 0} // want `http.Client has no Timeout`
	return c.Get(u)
}

func newClient(u string) (*http.Response, error) {
	c := new(http.Client) // want `new\(http.Client\) has no Timeout`
	return c.Get(u)
}

// A Transport with only a dial timeout still waits forever for the answer.
func dialTimeoutOnly(u string) (*http.Response, error) {
	c := &http.Client{Transport: &http.Transport{TLSHandshakeTimeout: 10 * time.Second}} // want `http.Client has no Timeout`
	return c.Get(u)
}

type service struct {
	http *http.Client
	base string
}

func newService(base string) *service {
	return &service{base: base, http: &http.Client{}} // want `http.Client has no Timeout`
}

func returned() *http.Client {
	return &http.Client{Transport: http.DefaultTransport} // want `http.Client has no Timeout`
}

func clonedDefault(u string) (*http.Response, error) {
	c := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()} // want `http.Client has no Timeout`
	return c.Get(u)
}

// prepare does not touch Timeout: the client it is given stays unbounded.
func prepare(c *http.Client) { c.Jar = nil }

func preparedOnly(u string) (*http.Response, error) {
	c := &http.Client{} // want `http.Client has no Timeout`
	prepare(c)
	return c.Get(u)
}

// A default chosen when the caller gives none, in a way other than a nil
// check: the caller cannot give a client with a Timeout.
func defaultUnlessNamed(name string, u string) (*http.Response, error) {
	var c *http.Client
	if name == "" {
		c = http.DefaultClient // want `http.DefaultClient, handed on here as the client to send with, has no Timeout`
	}
	return send2(c, u)
}

func send2(c *http.Client, u string) (*http.Response, error) { return c.Get(u) }

func defaultInField() *api { return &api{client: http.DefaultClient} } // want `http.DefaultClient, handed on here`

func defaultPassed(u string) error { return send(http.DefaultClient, u) } // want `http.DefaultClient, handed on here`

func send(c *http.Client, u string) error {
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// A Transport from the caller is taken to bound nothing: on the code
// measured, one such transport in seventeen set ResponseHeaderTimeout.
func transportFromCaller(rt http.RoundTripper, u string) (*http.Response, error) {
	c := &http.Client{Transport: rt} // want `http.Client has no Timeout`
	return c.Get(u)
}

type logging struct{ next http.RoundTripper }

func (l logging) RoundTrip(r *http.Request) (*http.Response, error) { return l.next.RoundTrip(r) }

func wrappedTransport(u string) (*http.Response, error) {
	c := &http.Client{Transport: logging{next: http.DefaultTransport}} // want `http.Client has no Timeout`
	return c.Get(u)
}

// ---- must not flag ----

var withTimeout = &http.Client{Timeout: 10 * time.Second}

func goodTimeoutVar(u string, d time.Duration) (*http.Response, error) {
	c := &http.Client{Timeout: d}
	return c.Get(u)
}

// The Timeout is assigned right after the literal.
func goodSetAfter(u string) (*http.Response, error) {
	c := &http.Client{Transport: http.DefaultTransport}
	c.Timeout = 5 * time.Second
	return c.Get(u)
}

func goodSetWhenConfigured(u string, d time.Duration) (*http.Response, error) {
	c := &http.Client{}
	if d > 0 {
		c.Timeout = d
	}
	return c.Get(u)
}

var tuned = &http.Client{}

func init() { tuned.Timeout = time.Minute }

type api struct{ client *http.Client }

func newAPI() *api { return &api{client: &http.Client{}} }

// An option elsewhere in the package sets the field's Timeout.
func (a *api) withTimeout(d time.Duration) { a.client.Timeout = d }

// A Transport that bounds the wait for the response head: a choice made
// for streaming responses, which a Timeout would cut.
func goodStreaming(u string) (*http.Response, error) {
	c := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 10 * time.Second}}
	return c.Get(u)
}

func goodStreamingVar(u string) (*http.Response, error) {
	t := &http.Transport{ResponseHeaderTimeout: 10 * time.Second}
	c := &http.Client{Transport: t}
	return c.Get(u)
}

func goodDoWithDeadlineDirect(u string) (*http.Response, error) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

func goodDoWithDeadline(u string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req = req.WithContext(ctx)
	return http.DefaultClient.Do(req)
}

func goodSuppressed(u string) (*http.Response, error) {
	return http.Get(u) //nolint:client-timeout // one-shot CLI, bounded by the shell
}

func goodNotAClient(u string) (*http.Request, error) {
	return http.NewRequest("GET", u, strings.NewReader(""))
}

func goodTransportTunedAfter(u string) (*http.Response, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 10 * time.Second
	c := &http.Client{Transport: t}
	return c.Get(u)
}

// configure sets the Timeout of the client it is given.
func configure(c *http.Client, d time.Duration) { c.Timeout = d }

func goodConfigured(u string) (*http.Response, error) {
	c := &http.Client{}
	configure(c, time.Minute)
	return c.Get(u)
}

// cmd/go's shape: the new client is overwritten with a copy of another.
func goodCopied(original *http.Client) *http.Client {
	c := new(http.Client)
	*c = *original
	c.CheckRedirect = nil
	return c
}

// minio-go's shape: the package's own helper returns a Transport that
// bounds the wait for the response head.
var boundedTransport = func() (*http.Transport, error) {
	t := &http.Transport{ResponseHeaderTimeout: time.Minute}
	return t, nil
}

func newBoundedTransport() *http.Transport {
	return &http.Transport{ResponseHeaderTimeout: time.Minute}
}

func goodHelperTransportDirect(u string) (*http.Response, error) {
	c := &http.Client{Transport: newBoundedTransport()}
	return c.Get(u)
}

func goodHelperTransport(custom http.RoundTripper, u string) (*http.Response, error) {
	transport := custom
	if transport == nil {
		var err error
		transport, err = boundedTransport()
		if err != nil {
			return nil, err
		}
	}
	c := &http.Client{Transport: transport}
	return c.Get(u)
}

// net/http's own default for a client the caller did not give: code
// further on may bound its requests (tessera's checkpoint publisher does).
func goodNilFallback(c *http.Client, u string) (*http.Response, error) {
	if c == nil {
		c = http.DefaultClient
	}
	return c.Get(u)
}

// Comparing with, reading and copying http.DefaultClient sends nothing.
func goodDefaultInspected(c *http.Client) (bool, http.RoundTripper, http.Client) {
	return c == http.DefaultClient, http.DefaultClient.Transport, *http.DefaultClient
}
