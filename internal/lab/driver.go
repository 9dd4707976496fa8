package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/load"
	"github.com/hotpathhq/hotpath/wire"
)

// loadResult is what one closed-loop run did.
type loadResult struct {
	Requests int64
	Conns    int64 // connections opened
	Elapsed  time.Duration
}

// ReqPerSec returns the throughput.
func (l loadResult) ReqPerSec() float64 { return float64(l.Requests) / l.Elapsed.Seconds() }

// closedLoop drives addr with conns keep-alive HTTP/1.1 connections for d:
// each connection sends req, reads the whole response, and sends the next
// (no pipelining). A response with "Connection: close" makes the worker
// reconnect, as a client would. The driver allocates nothing per request
// in steady state, so in-process runs add little garbage of their own.
// check, if set, sees each response body (for same-work checks).
func closedLoop(ctx context.Context, addr string, conns int, d time.Duration, req []byte, check func(body []byte) error) (loadResult, error) {
	var reqs, opened atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		// The run's time is up. One that has not completed a request yet
		// (a busy machine, a slow first connection: smoke runs last 2 ms)
		// waits for its first response, up to firstResponseWait, rather
		// than fail with nothing measured.
		giveUp := time.NewTimer(firstResponseWait)
		defer giveUp.Stop()
		poll := time.NewTicker(time.Millisecond)
		defer poll.Stop()
		for reqs.Load() == 0 {
			select {
			case <-giveUp.C:
				cancel()
				return
			case <-ctx.Done():
				return
			case <-poll.C:
			}
		}
		cancel()
	}()
	var wg sync.WaitGroup
	errc := make(chan error, conns)
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := driveConn(ctx, addr, req, &reqs, &opened, check); err != nil {
				errc <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	res := loadResult{Requests: reqs.Load(), Conns: opened.Load(), Elapsed: time.Since(start)}
	select {
	case err := <-errc:
		return res, err
	default:
	}
	if res.Requests == 0 {
		return res, errors.New("lab: no request completed")
	}
	return res, nil
}

// firstResponseWait bounds how long a closed-loop run past its duration
// waits for its first response.
const firstResponseWait = 10 * time.Second

func driveConn(ctx context.Context, addr string, req []byte, reqs, opened *atomic.Int64, check func([]byte) error) error {
	var body []byte
	var br *bufio.Reader
	// cur is the open connection, shared with the AfterFunc that unblocks
	// it when the run ends.
	var cur atomic.Pointer[net.Conn]
	closeConn := func() {
		if p := cur.Swap(nil); p != nil {
			(*p).Close()
		}
	}
	defer closeConn()
	stop := context.AfterFunc(ctx, func() {
		if p := cur.Load(); p != nil {
			(*p).SetDeadline(time.Unix(1, 0))
		}
	})
	defer stop()
	for ctx.Err() == nil {
		if cur.Load() == nil {
			// The dial has its own timeout: the run's deadline may be near,
			// and a dial cut short by it is not the server's failure.
			nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			cur.Store(&nc)
			if ctx.Err() != nil { // the AfterFunc may have run before the store
				return nil
			}
			opened.Add(1)
			if br == nil {
				br = bufio.NewReaderSize(nc, 16<<10)
			} else {
				br.Reset(nc)
			}
		}
		c := *cur.Load()
		if _, err := c.Write(req); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		var closeAfter bool
		var err error
		body, closeAfter, err = readResponse(br, body[:0])
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) { // server closed an idle conn
				closeConn()
				continue
			}
			return err
		}
		reqs.Add(1)
		if check != nil {
			if err := check(body); err != nil {
				return err
			}
		}
		if closeAfter {
			closeConn()
		}
	}
	return nil
}

// readResponse reads one HTTP/1.1 response with a Content-Length body,
// appending the body to body; the head is parsed by hotpath's wire codec.
// It reports whether the server asked to close the connection.
func readResponse(br *bufio.Reader, body []byte) ([]byte, bool, error) {
	var resp wire.Response
	lim := wire.DefaultLimits()
	for {
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err != nil {
				return body, false, err
			}
		}
		head, _ := br.Peek(br.Buffered())
		n, err := resp.Parse(head, &lim)
		if err == wire.ErrNeedMore {
			if br.Buffered() == br.Size() {
				return body, false, errors.New("lab: response head larger than the read buffer")
			}
			if _, err := br.Peek(br.Buffered() + 1); err != nil {
				return body, false, err
			}
			continue
		}
		if err != nil {
			return body, false, fmt.Errorf("lab: bad response: %w", err)
		}
		if resp.StatusCode/100 != 2 {
			return body, false, fmt.Errorf("lab: server answered %d %s", resp.StatusCode, resp.Reason)
		}
		if resp.Framing(false) != wire.LengthBody {
			return body, false, errors.New("lab: response without Content-Length")
		}
		closeAfter, left := resp.Close, int(resp.ContentLength)
		br.Discard(n)
		for left > 0 {
			chunk, err := br.Peek(min(left, br.Size()))
			if err != nil && len(chunk) == 0 {
				return body, false, err
			}
			body = append(body, chunk...)
			br.Discard(len(chunk))
			left -= len(chunk)
		}
		return body, closeAfter, nil
	}
}

// getRequest returns a keep-alive GET request for path, as wrk sends it.
func getRequest(path string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
}

// serverLoad runs one closed-loop run of hotpath's load generator (package
// load, the engine behind `hotpath load`) against path on h and returns
// the request rate, the server's CPU-µs and allocations per request, and
// the connections opened per 1,000 requests beyond the first conns.
func serverLoad(ctx context.Context, h *serverHandle, conns int, d time.Duration, path string) (rps, cpuUs, allocs, connsPer1k float64, err error) {
	var s0 serverStats
	var res *load.Result
	// A run so short that no connection sent a request before it ended
	// (the smoke budget's 2 ms, on a busy machine) is run again, longer,
	// up to firstResponseWait: one with nothing measured would fail.
	for {
		if s0, err = h.Stats(); err != nil {
			return
		}
		res, err = load.Run(ctx, load.Config{
			URL:         "http://" + h.Addr + path,
			Connections: conns,
			Duration:    d,
			Engine:      load.EngineFast,
		})
		if err != nil {
			return
		}
		if res.Sent > 0 || d >= firstResponseWait {
			break
		}
		d *= 4
	}
	if res.Errors > 0 || res.Status["200"] != res.Requests || res.Requests == 0 {
		return 0, 0, 0, 0, fmt.Errorf("lab: load run: %d responses, status %v, errors %v", res.Requests, res.Status, res.ErrorsByKind)
	}
	s1, err := h.Stats()
	if err != nil {
		return
	}
	n := float64(res.Requests)
	reopened := float64(max(0, res.Conns.Opened-int64(conns)))
	return res.ReqPerS, float64((s1.CPU - s0.CPU).Microseconds()) / n, float64(s1.Mallocs-s0.Mallocs) / n, reopened * 1000 / n, nil
}
