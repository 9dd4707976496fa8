package undrainedbody

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
)

var client = &http.Client{}

type payload struct{ Name string }

// ---- must flag ----

func badDecode(url string) (*payload, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close() // want `resp.Body is closed before EOF`
	var p payload
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

func badStatusOnly(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // want `resp.Body is closed before EOF`
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

func closeOnly(b io.Closer) { b.Close() }

func badHelperCloses(url string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer closeOnly(res.Body) // want `res.Body is closed before EOF`
	return nil
}

func get(url string) (*http.Response, error) { return client.Get(url) }

func badThroughWrapper(url string) int {
	resp, err := get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close() // want `resp.Body is closed before EOF`
	return resp.StatusCode
}

func badRequestWithContext(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, "POST", url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close() // want `resp.Body is closed before EOF`
	return nil
}

func badRequestLiteral(u *neturl.URL) int {
	resp, err := http.DefaultTransport.RoundTrip(&http.Request{URL: u, Header: http.Header{}})
	if err != nil {
		return 0
	}
	resp.Body.Close() // want `resp.Body is closed before EOF`
	return resp.StatusCode
}

// send returns the response to a request whose method its caller picks.
func send(ctx context.Context, method, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}

func badMethodThroughWrapper(ctx context.Context, url string) int {
	resp, err := send(ctx, http.MethodDelete, url)
	if err != nil {
		return 0
	}
	resp.Body.Close() // want `resp.Body is closed before EOF`
	return resp.StatusCode
}

// ---- must not flag ----

// goodRequestFromCaller is cmd/go's gitauth shape: the caller built the
// request (a HEAD there), so its method is unknown here.
func goodRequestFromCaller(c *http.Client, req *http.Request) bool {
	for range 3 {
		res, err := c.Do(req)
		if err != nil {
			continue
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	return false
}

func goodMethodFromCaller(ctx context.Context, method, url string) int {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func goodHeadThroughWrapper(ctx context.Context, url string) int {
	resp, err := send(ctx, http.MethodHead, url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func goodMethodVarThroughWrapper(ctx context.Context, method, url string) int {
	resp, err := send(ctx, method, url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

type api struct{ prepared *http.Request }

func newProbe(url string) (*http.Request, error) { return http.NewRequest("HEAD", url, nil) }

func (a *api) goodRequestFromHelper(url string) int {
	req, err := newProbe(url)
	if err != nil {
		return 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (a *api) goodRequestFromField(ctx context.Context) int {
	resp, err := client.Do(a.prepared.Clone(ctx))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func goodMethodSetLater(url string, probe bool) int {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	if probe {
		req.Method = pickMethod()
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func pickMethod() string { return os.Getenv("PROBE_METHOD") }

func goodReadAll(url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func goodDrainInClosure(url string) (*payload, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	var p payload
	return &p, json.NewDecoder(resp.Body).Decode(&p)
}

func drainAndClose(rc io.ReadCloser) {
	io.Copy(io.Discard, rc)
	rc.Close()
}

func goodHelperDrains(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer drainAndClose(resp.Body)
	return nil
}

func goodClosureParam(url string) error {
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	defer func(b io.ReadCloser) {
		io.Copy(io.Discard, b)
		b.Close()
	}(res.Body)
	return nil
}

func goodIfElseThenOneDefer(a, b string, first bool) ([]byte, error) {
	var resp *http.Response
	var err error
	if first {
		resp, err = client.Get(a)
	} else {
		resp, err = client.Get(b)
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

type holder struct{ resp *http.Response }

func (h *holder) goodStructField() {
	h.resp.Body.Close() // a field: someone else's lifetime
}

func goodRecorder() int {
	rec := httptest.NewRecorder()
	res := rec.Result()
	defer res.Body.Close()
	return res.StatusCode
}

func goodWrapperReturns(url string) (*http.Response, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 500 {
		resp.Body.Close()
		return nil, errors.New("server error")
	}
	return resp, nil
}

func goodHead(url string) int {
	resp, err := client.Head(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func goodHeadRequest(url string) int {
	req, _ := http.NewRequest(http.MethodHead, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func goodNoContent(req *http.Request) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return errors.New(resp.Status)
	}
	return nil
}

func goodCopyToFile(url string, f *os.File) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

func goodUnknownHelper(url string, consume func(io.Reader)) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	consume(resp.Body)
}

func goodSuppressed(url string) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	resp.Body.Close() //nolint:undrained-body // the server never keeps the connection alive
}

func goodIgnoreDirective(url string) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	//hotpath:ignore HP012 one-shot health probe
	resp.Body.Close()
}
