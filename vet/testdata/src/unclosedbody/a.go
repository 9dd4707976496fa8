package unclosedbody

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

var client = &http.Client{}

type payload struct{ Name string }

// ---- must flag ----

func badStatusOnly(url string) error {
	resp, err := http.Get(url) // want `resp.Body is never closed`
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

func badDecodeNoClose(url string) (*payload, error) {
	resp, err := client.Get(url) // want `resp.Body is never closed`
	if err != nil {
		return nil, err
	}
	var p payload
	err = json.NewDecoder(resp.Body).Decode(&p)
	return &p, err
}

func badReadAllNoClose(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req) // want `res.Body is never closed`
	if err != nil {
		return nil, err
	}
	return io.ReadAll(res.Body)
}

func badHead(url string) (string, error) {
	resp, err := http.Head(url) // want `resp.Body is never closed`
	if err != nil {
		return "", err
	}
	return resp.Header.Get("ETag"), nil
}

func badRoundTrip(t *http.Transport, req *http.Request) int {
	resp, err := t.RoundTrip(req) // want `resp.Body is never closed`
	if err != nil {
		return 0
	}
	return resp.StatusCode
}

func get(url string) (*http.Response, error) { return client.Get(url) }

func badThroughWrapper(url string) bool {
	resp, err := get(url) // want `resp.Body is never closed`
	return err == nil && resp.StatusCode == 200
}

func badDiscarded(url string) {
	http.Post(url, "text/plain", nil) // want `the response is discarded`
}

func badBlank(url string) error {
	_, err := client.Get(url) // want `the response is assigned to _`
	return err
}

// ---- must not flag ----

func okDefer(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err // early return on err before close
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func okDeferClosure(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer func() { resp.Body.Close() }()
	return nil
}

func okDeferLitParam(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer func(b io.ReadCloser) { _ = b.Close() }(resp.Body)
	return nil
}

func closeBody(b io.Closer) { _ = b.Close() }

func okHelper(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer closeBody(resp.Body)
	return nil
}

func finish(r *http.Response) error { return r.Body.Close() }

func okRespToCloser(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	return finish(resp)
}

func okIfElse(url string, post bool) error {
	var resp *http.Response
	var err error
	if post {
		resp, err = http.Post(url, "text/plain", nil)
	} else {
		resp, err = http.Get(url)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return nil
}

func okReturned(url string) (*http.Response, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func okNamedResult(url string) (resp *http.Response, err error) {
	resp, err = client.Get(url)
	return
}

type fetcher struct {
	last *http.Response
	all  []*http.Response
}

func (f *fetcher) okField(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	f.last = resp
	return nil
}

func (f *fetcher) okCollection(url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	f.all = append(f.all, resp)
	return nil
}

var lastResp *http.Response

func okGlobal(url string) {
	resp, err := client.Get(url)
	if err == nil {
		lastResp = resp
	}
}

func okChannel(url string, out chan<- *http.Response) {
	resp, err := client.Get(url)
	if err == nil {
		out <- resp
	}
}

type wrapped struct{ r *http.Response }

func okWrapped(url string) (*wrapped, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	return &wrapped{r: resp}, nil
}

func okUnknown(url string, handle func(*http.Response)) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	handle(resp)
}

func okBodyToUnknown(url string, consume func(io.ReadCloser)) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	consume(resp.Body)
}

func okBodyStored(url string) io.ReadCloser {
	resp, err := client.Get(url)
	if err != nil {
		return nil
	}
	body := resp.Body
	return body
}

func okRecorder() int {
	rec := httptest.NewRecorder()
	resp := rec.Result()
	return resp.StatusCode
}

func okGoroutine(url string, wg *sync.WaitGroup) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
}

func okLoop(urls []string) {
	for _, u := range urls {
		resp, err := client.Get(u)
		if err != nil {
			continue
		}
		resp.Body.Close()
	}
}

func okWrite(url string, w io.Writer) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	return resp.Write(w) // Write closes the body
}

func okRoundTripper(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Header.Set("X-Seen", "1")
	return resp, nil
}

func okSuppressed(url string) {
	resp, err := client.Get(url) //nolint:unclosed-body // closed by the finalizer in a test fixture
	_ = err
	_ = resp.StatusCode
}

func okRoundTripDropped(t *http.Transport, req *http.Request) error {
	_, err := t.RoundTrip(req) // a fake connection answering 204: nothing to close (httputil's dump)
	return err
}
