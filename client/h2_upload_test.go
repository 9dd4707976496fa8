package client

// HTTP/2 request bodies that block, fail, panic or fail their stream: the
// request still ends when it should, the body is closed exactly once, and
// the connection keeps no slot for it.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// closeCounter is a request body that counts its Closes; a Close also
// closes pipe, if set, as closing an io.Pipe's reader does.
type closeCounter struct {
	io.Reader
	pipe   *io.PipeReader
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	if c.pipe != nil {
		c.pipe.Close()
	}
	return nil
}

// blockingBody is a body whose Read blocks until it is closed, as an
// io.Pipe's does while its writer is slow.
func blockingBody() (*closeCounter, *io.PipeWriter) {
	pr, pw := io.Pipe()
	return &closeCounter{Reader: pr, pipe: pr}, pw
}

// h2cTransport is a Transport speaking h2c with prior knowledge.
func h2cTransport(t *testing.T) *Transport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// A request blocked reading its own body ends when its context is
// canceled or its Timeout passes: the body is closed (as net/http's
// transport does), which wakes the Read, and closed once.
func TestH2BlockedBodyReadEndsOnCancelAndTimeout(t *testing.T) {
	addr := rawH2Server(t, nil, func(c *rawH2) { c.drain() })
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			tr := h2cTransport(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "timeout" {
				tr.Timeout = 200 * time.Millisecond
			}
			body, pw := blockingBody()
			defer pw.Close()
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/", body)
			done := make(chan error, 1)
			go func() {
				_, err := tr.RoundTrip(req)
				done <- err
			}()
			if how == "cancel" {
				time.Sleep(100 * time.Millisecond)
				cancel()
			}
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("the request succeeded")
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("RoundTrip still blocked in the body's Read 10 s after the %s", how)
			}
			waitFor(t, func() bool { return body.closes.Load() > 0 })
			time.Sleep(50 * time.Millisecond) // a second Close would come now
			if n := body.closes.Load(); n != 1 {
				t.Errorf("request body closed %d times, want 1", n)
			}
		})
	}
}

// The rest of a request body that uploads on its own goroutine, blocked
// in the body's Read, stops when its stream ends: the caller closes the
// response body, or the server sends the whole response and then
// RST_STREAM NO_ERROR (it wants no more of the body, RFC 9113 §8.1). The
// request body is closed once and the goroutine returns.
func TestH2UploadGoroutineEndsWithItsStream(t *testing.T) {
	for _, how := range []string{"response-body-closed", "server-no-error-reset"} {
		t.Run(how, func(t *testing.T) {
			addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
				if f.Type != h2.FrameHeaders {
					return
				}
				id := f.StreamID
				c.headers(id, false, ":status", "200")
				go func() { // the window the upload waited for, after the head
					time.Sleep(100 * time.Millisecond)
					c.write(h2.AppendWindowUpdate(nil, 0, 1<<20))
					c.write(h2.AppendWindowUpdate(nil, id, 1<<20))
					if how == "server-no-error-reset" {
						time.Sleep(200 * time.Millisecond) // the upload now waits in the pipe
						c.write(h2.AppendData(nil, id, h2.FlagEndStream, []byte("done"), 0))
						c.write(h2.AppendRSTStream(nil, id, h2.ErrCodeNo))
					}
				}()
			}))
			tr := h2cTransport(t)
			pr, pw := io.Pipe()
			defer pw.Close()
			body := &closeCounter{Reader: io.MultiReader(bytes.NewReader(make([]byte, 70000)), pr), pipe: pr}
			req, _ := http.NewRequest("POST", "http://"+addr+"/", body)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if how == "response-body-closed" {
				time.Sleep(300 * time.Millisecond) // the window came: the upload now waits in the pipe
				resp.Body.Close()
			} else if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "done" {
				t.Fatalf("the whole response before the reset: %q, %v", b, err)
			}
			waitFor(t, func() bool {
				buf := make([]byte, 1<<20)
				st := string(buf[:runtime.Stack(buf, true)])
				return body.closes.Load() == 1 && !strings.Contains(st, "(*h2Upload).finish")
			})
		})
	}
}

// The request body is closed once whatever ends the request: a reset by
// the server after the body was sent, a body whose Read fails during the
// prefetch, and a REFUSED_STREAM retried with GetBody's second body.
func TestH2RequestBodyClosedOnce(t *testing.T) {
	t.Run("reset", func(t *testing.T) {
		addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
			if f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream) {
				c.write(h2.AppendRSTStream(nil, f.StreamID, h2.ErrCodeInternal))
			}
		}))
		body := &closeCounter{Reader: strings.NewReader(strings.Repeat("x", 50000))}
		req, _ := http.NewRequest("POST", "http://"+addr+"/", body)
		if _, err := h2cTransport(t).RoundTrip(req); err == nil {
			t.Fatal("a reset request succeeded")
		}
		// A body not in memory is closed by its upload's goroutine, which
		// may end after RoundTrip returns.
		waitFor(t, func() bool { return body.closes.Load() >= 1 })
		time.Sleep(20 * time.Millisecond)
		if n := body.closes.Load(); n != 1 {
			t.Errorf("closed %d times, want 1", n)
		}
	})
	t.Run("prefetch-error", func(t *testing.T) {
		addr := rawH2Server(t, nil, func(c *rawH2) { c.drain() })
		body := &closeCounter{Reader: errAfter{}}
		req, _ := http.NewRequest("POST", "http://"+addr+"/", nil)
		req.Body, req.ContentLength = body, 10
		req.GetBody = func() (io.ReadCloser, error) { return &closeCounter{Reader: errAfter{}}, nil }
		if _, err := h2cTransport(t).RoundTrip(req); err == nil || err.Error() != "disk gone" {
			t.Fatalf("err = %v, want the body's, as is", err)
		}
		if n := body.closes.Load(); n != 1 {
			t.Errorf("closed %d times, want 1", n)
		}
	})
	t.Run("refused-and-retried", func(t *testing.T) {
		var refused atomic.Bool
		addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
			if f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream) {
				if refused.CompareAndSwap(false, true) {
					c.write(h2.AppendRSTStream(nil, f.StreamID, h2.ErrCodeRefusedStream))
					return
				}
				c.headers(f.StreamID, true, ":status", "204")
			}
		}))
		first := &closeCounter{Reader: strings.NewReader("hello")}
		var second *closeCounter
		req, _ := http.NewRequest("POST", "http://"+addr+"/", first)
		req.GetBody = func() (io.ReadCloser, error) {
			second = &closeCounter{Reader: strings.NewReader("hello")}
			return second, nil
		}
		resp, err := h2cTransport(t).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if second == nil {
			t.Fatal("the refused request was not sent again")
		}
		if a, b := first.closes.Load(), second.closes.Load(); a != 1 || b != 1 {
			t.Errorf("bodies closed %d and %d times, want 1 and 1", a, b)
		}
	})
}

// errAfter is a body whose Read fails.
type errAfter struct{}

func (errAfter) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

// panicBody is a body whose Read panics (or exits its goroutine).
type panicBody struct{ goexit bool }

func (b panicBody) Read([]byte) (int, error) {
	if b.goexit {
		runtime.Goexit()
	}
	panic("body bug")
}

// A request body whose Read panics or calls runtime.Goexit before its
// stream opens (the prefetch of a small body, on the caller's goroutine:
// the panic reaches the caller), or calls runtime.Goexit after (a body
// streamed on the upload's own goroutine, where a panic ends the program,
// as in net/http's write loop), leaves the connection no slot in use and
// no stream open: it serves the next request.
func TestH2BodyReadPanicFreesItsSlot(t *testing.T) {
	addr := rawH2Server(t, []h2.Setting{{ID: h2.SettingMaxConcurrentStreams, Val: 2}}, onFrames(func(c *rawH2, f rawFrame) {
		if f.Type == h2.FrameHeaders && f.Flags.Has(h2.FlagEndStream) {
			c.headers(f.StreamID, true, ":status", "204")
		}
	}))
	tr := h2cTransport(t)
	cc := dialH2C(t, tr, addr)
	for _, goexit := range []bool{false, true} {
		for _, prefetch := range []bool{true, false} {
			if !prefetch && !goexit {
				continue // a panic on the upload's goroutine ends the program
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() { recover() }()
				req, _ := http.NewRequest("POST", "http://"+addr+"/", nil)
				req.Body = io.NopCloser(panicBody{goexit})
				if prefetch {
					req.ContentLength = 10
					req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("none") }
				}
				if !cc.reserve() {
					t.Error("no stream slot")
					return
				}
				cc.roundTrip(req, context.Background(), time.Time{})
			}()
			<-done
		}
	}
	cc.mu.Lock()
	inUse, open := cc.ids.Active(), len(cc.streams)
	cc.mu.Unlock()
	if inUse != 0 || open != 0 {
		t.Fatalf("after 4 bodies that panicked or exited: %d slots in use, %d streams open", inUse, open)
	}
	if !cc.reserve() {
		t.Fatal("the connection takes no more requests")
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	resp, err := cc.roundTrip(req, context.Background(), time.Time{})
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("next request: %v %v", resp, err)
	}
	resp.Body.Close()
}

// onFrames is a rawH2Server script that calls f with each frame the
// client sends, until the connection ends.
func onFrames(f func(c *rawH2, f rawFrame)) func(c *rawH2) {
	return func(c *rawH2) {
		for {
			fr, err := c.next()
			if err != nil {
				return
			}
			f(c, fr)
		}
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An HTTP/2 response body shorter than its content-length reads what came,
// then io.ErrUnexpectedEOF, as net/http's.
func TestH2ShortBodyIsUnexpectedEOF(t *testing.T) {
	addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
		if f.Type == h2.FrameHeaders {
			c.headers(f.StreamID, false, ":status", "200", "content-length", "10")
			c.data(f.StreamID, true, "abc")
		}
	}))
	resp, err := (&http.Client{Transport: h2cTransport(t)}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if string(b) != "abc" || err != io.ErrUnexpectedEOF {
		t.Errorf("read %q, %v: want \"abc\", io.ErrUnexpectedEOF", b, err)
	}
}
