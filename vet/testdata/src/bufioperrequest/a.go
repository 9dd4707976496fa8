package bufioperrequest

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
)

// ---- must flag ----

func handler(w http.ResponseWriter, r *http.Request) {
	br := bufio.NewReader(r.Body) // want `bufio.NewReader allocates a new buffer for every request body`
	for {
		if _, err := br.ReadString('\n'); err != nil {
			return
		}
	}
}

func limited(r *http.Request) *bufio.Reader {
	return bufio.NewReaderSize(io.LimitReader(r.Body, 1<<20), 64<<10) // want `bufio.NewReaderSize allocates`
}

// ---- must not flag ----

var readers = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

func goodPooled(r *http.Request) {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r.Body)
	defer readers.Put(br)
}

func goodResponse(resp *http.Response) *bufio.Reader {
	return bufio.NewReader(resp.Body)
}

func goodOther() *bufio.Reader {
	return bufio.NewReader(strings.NewReader("x"))
}

func goodSuppressed(r *http.Request) *bufio.Reader {
	return bufio.NewReader(r.Body) //nolint:bufio-per-request // long-lived stream, one per connection
}
