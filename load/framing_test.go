package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFastFraming(t *testing.T) {
	big := strings.Repeat("x", 100000)
	cases := []struct {
		name, method string
		write        func(c net.Conn, n int) bool
		opened       int64
		body         ResponseBody
	}{
		{"chunked-trailers-bytewise", "GET", func(c net.Conn, n int) bool {
			slowWrite(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n3\r\nabc\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n")
			return true
		}, 1, ResponseBody{}},
		{"cl-big", "GET", func(c net.Conn, n int) bool {
			c.Write([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(big), big)))
			return true
		}, 1, ResponseBody{}},
		{"chunked-big", "GET", func(c net.Conn, n int) bool {
			c.Write([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", len(big), big, 7, "1234567")))
			return true
		}, 1, ResponseBody{}},
		{"head", "HEAD", func(c net.Conn, n int) bool {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"))
			return true
		}, 1, ResponseBody{}},
		{"204-304", "GET", func(c net.Conn, n int) bool {
			if n%2 == 0 {
				c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
			} else {
				c.Write([]byte("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"))
			}
			return true
		}, 1, ResponseBody{}},
		{"1xx", "GET", func(c net.Conn, n int) bool {
			c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
			time.Sleep(time.Millisecond)
			c.Write([]byte("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
			return true
		}, 1, ResponseBody{}},
		{"http10", "GET", func(c net.Conn, n int) bool {
			c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
			return true // server keeps it open; client must close
		}, 20, ResponseBody{}},
		{"conn-close", "GET", func(c net.Conn, n int) bool {
			c.Write([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello"))
			return false
		}, 20, ResponseBody{}},
		{"close-delimited", "GET", func(c net.Conn, n int) bool {
			c.Write([]byte("HTTP/1.1 200 OK\r\n\r\nhello world"))
			return false
		}, 20, ResponseBody{}},
		{"limit-chunked-small", "GET", func(c net.Conn, n int) bool {
			slowWrite(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
			return true
		}, 1, ResponseBody{Mode: LimitBody, Limit: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := scriptServer(t, tc.write)
			res, err := Run(context.Background(), Config{URL: url, Method: tc.method, Connections: 1, Requests: 20, Timeout: 2 * time.Second, ResponseBody: tc.body})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 20 || res.Errors != 0 || res.Conns.Opened != tc.opened {
				t.Errorf("requests %d errors %v opened %d (want 20, 0, %d) status %v protos %v", res.Requests, res.ErrorsByKind, res.Conns.Opened, tc.opened, res.Status, res.Protocols)
			}
		})
	}
}

// Server closes an idle keep-alive conn without "Connection: close".
func TestSilentClose(t *testing.T) {
	url := scriptServer(t, func(c net.Conn, n int) bool {
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
		return n < 4 // close after 5th response
	})
	for _, e := range []Engine{EngineFast, EngineNetHTTP} {
		res, _ := Run(context.Background(), Config{URL: url, Engine: e, Connections: 1, Requests: 50})
		t.Logf("%s: requests %d errors %v opened %d", e, res.Requests, res.ErrorsByKind, res.Conns.Opened)
	}
}

// TestCheckSeesWholeBodies: Config.CheckResponse gets each response's
// status and whole body whatever its framing and however it arrives, and
// a response it refuses is an error of kind "check"; CheckResponse on an
// engine that cannot give it bodies is refused.
func TestCheckSeesWholeBodies(t *testing.T) {
	big := strings.Repeat("0123456789", 10000) // past the 32 KiB read buffer
	for name, resp := range map[string]string{
		"length":  "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + big,
		"chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n186a0\r\n" + big + "\r\n0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			url := scriptServer(t, func(c net.Conn, n int) bool {
				slowWrite(c, resp[:50])
				c.Write([]byte(resp[50:]))
				return true
			})
			var mu sync.Mutex
			var seen, wrong int
			res, err := Run(context.Background(), Config{URL: url, Connections: 1, Requests: 6, Timeout: 2 * time.Second,
				CheckResponse: func(status int, body []byte) error {
					mu.Lock()
					defer mu.Unlock()
					if seen++; status != 200 || string(body) != big {
						wrong++
					}
					if seen%2 == 0 {
						return errors.New("every second one refused")
					}
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if seen != 6 || wrong != 0 || res.Requests != 3 || res.ErrorsByKind["check"] != 3 {
				t.Errorf("checked %d (%d wrong), %d good responses, errors %v; want 6, 0 wrong, 3, 3 check", seen, wrong, res.Requests, res.ErrorsByKind)
			}
		})
	}
	check := func(int, []byte) error { return nil }
	for _, cfg := range []Config{
		{URL: "http://127.0.0.1:1/", CheckResponse: check, Engine: EngineNetHTTP},
		{URL: "http://127.0.0.1:1/", CheckResponse: check, ResponseBody: ResponseBody{Mode: CloseBody}},
		{URL: "http://127.0.0.1:1/", CheckResponse: check, Proto: H2C},
	} {
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "CheckResponse needs") {
			t.Errorf("engine %q proto %v body %v: err %v, want CheckResponse refused", cfg.Engine, cfg.Proto, cfg.ResponseBody, err)
		}
	}
}
