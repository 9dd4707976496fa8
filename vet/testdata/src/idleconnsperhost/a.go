package idleconnsperhost

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// ---- must flag ----

var tuned = &http.Transport{MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second} // want `MaxIdleConns/MaxConnsPerHost is raised but MaxIdleConnsPerHost stays at 2`

var httpClient = &http.Client{Timeout: 5 * time.Second} // want `this Client is used from goroutines started in a loop but runs on http.DefaultTransport`

func fanOut(urls []string) {
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := httpClient.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

var pool = &http.Client{Transport: &http.Transport{IdleConnTimeout: time.Minute}} // want `this Transport is used from goroutines started in a loop`

func fanOut2(reqs []*http.Request) {
	for _, r := range reqs {
		go pool.Do(r)
	}
}

// ---- must not flag ----

var good = &http.Transport{MaxIdleConns: 200, MaxIdleConnsPerHost: 100}

var goodLater = &http.Transport{MaxIdleConns: 200}

func init() { goodLater.MaxIdleConnsPerHost = 100 }

var sequential = &http.Client{Timeout: time.Second}

// One request at a time: the default of 2 is plenty.
func goodSequential(urls []string) {
	for _, u := range urls {
		resp, err := sequential.Get(u)
		if err == nil {
			resp.Body.Close()
		}
	}
}

var single = &http.Client{}

// One goroutine, not a loop of them.
func goodOneGoroutine(u string) {
	go single.Get(u)
}

var small = &http.Transport{MaxIdleConns: 2}

var wide = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func goodFanOutTuned(urls []string) {
	for _, u := range urls {
		go wide.Get(u)
	}
}

// coredns's health checker: a tuned literal built, polled sequentially and
// dropped in one function never holds more than one connection.
func goodSequentialPoller(ctx context.Context, url string) {
	tr := &http.Transport{MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second}
	client := http.Client{Timeout: 3 * time.Second, Transport: tr}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			resp, err := client.Do(req)
			if err != nil {
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		case <-ctx.Done():
			return
		}
	}
}

// A tuned transport kept in a field: an SDK credential client (minio-go's
// STS identity) refreshes sequentially; nothing shows fan-out.
type identity struct{ client http.Client }

func newIdentity() *identity {
	return &identity{client: http.Client{Transport: &http.Transport{MaxIdleConns: 100}}}
}

// Shared by the whole program, like http.DefaultTransport.
var sharedTuned http.RoundTripper = &http.Transport{MaxConnsPerHost: 50} // want `MaxIdleConns/MaxConnsPerHost is raised but MaxIdleConnsPerHost stays at 2`
