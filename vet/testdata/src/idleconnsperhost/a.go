package idleconnsperhost

import (
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
