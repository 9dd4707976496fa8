package websocket

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// engines are the two servers Accept is tested on: net/http's and
// hotpath's, each serving h on a loopback listener; start returns the
// address.
var engines = []struct {
	name  string
	start func(t *testing.T, h http.Handler) string
}{
	{"net/http", func(t *testing.T, h http.Handler) string {
		ln := listen(t)
		s := &http.Server{Handler: h}
		go s.Serve(ln)
		t.Cleanup(func() { s.Close() })
		return ln.Addr().String()
	}},
	{"hotpath", func(t *testing.T, h http.Handler) string {
		ln := listen(t)
		s := &server.Server{Handler: h}
		go s.Serve(ln)
		t.Cleanup(func() { s.Close() })
		return ln.Addr().String()
	}},
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// testCtx is a context for a test's I/O that a hang cannot outlive.
// promptly bounds what a test waits for something that should happen at
// once: generous for a loaded CI machine (a VM has stalled for seconds),
// far below the minute (longClose, a server that holds on) the failure it
// guards against would take.
const promptly = 10 * time.Second

// longClose is a CloseTimeout no test should wait out: a Close that
// waits past the peer's answer takes it whole.
var longClose = Options{CloseTimeout: time.Minute}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// echoHandler accepts and echoes every message until the connection
// ends; the error that ended it goes to done, if not nil.
func echoHandler(t *testing.T, opts *AcceptOptions, done chan<- error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, opts)
		if err != nil {
			if done != nil {
				done <- err
			}
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				if done != nil {
					done <- err
				}
				return
			}
			if err := c.Write(ctx, typ, msg); err != nil {
				if done != nil {
					done <- err
				}
				return
			}
		}
	})
}

// rawClient is a hand-written client: it sends the handshake and frames
// byte by byte as the test says, and reads the server's frames with the
// codec, so the tests see exactly what goes on the wire.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

const testKey = "dGhlIHNhbXBsZSBub25jZQ=="

func handshakeRequest(path string, extra ...string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + testKey +
		"\r\nSec-WebSocket-Version: 13\r\n" + strings.Join(extra, "") + "\r\n"
}

// dialRaw connects, sends the handshake (and early, in the same write)
// and checks the 101.
func dialRaw(t *testing.T, addr string, early []byte) *rawClient {
	t.Helper()
	nc := dialTest(t, addr, 20*time.Second)
	if _, err := nc.Write(append([]byte(handshakeRequest("/")), early...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != ws.AcceptKey(testKey) {
		t.Fatalf("handshake answered %s %v", resp.Status, resp.Header)
	}
	return &rawClient{t: t, nc: nc, br: br}
}

var rawMask = [4]byte{0x37, 0xfa, 0x21, 0x3d}

// frame sends one masked frame (unmasked if masked is false).
func (c *rawClient) frame(op ws.Opcode, fin, masked bool, p []byte) {
	c.t.Helper()
	var b []byte
	if masked {
		b = ws.AppendClientFrame(nil, op, fin, rawMask, p)
	} else {
		b = ws.AppendHeader(nil, ws.Header{Fin: fin, Opcode: op, Length: int64(len(p))})
		b = append(b, p...)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one frame from the server.
func (c *rawClient) read() (ws.Header, []byte) {
	c.t.Helper()
	h, p, err := readFrame(c.br, ws.Client)
	if err != nil {
		c.t.Fatal(err)
	}
	return h, p
}

// readFrame reads a frame with the codec: the header byte by byte, then
// the payload, unmasked.
func readFrame(br *bufio.Reader, role ws.Role) (ws.Header, []byte, error) {
	return readFrameRules(br, ws.Rules{Role: role, MaxPayload: -1})
}

// readFrameRules is readFrame under rules (Deflate: RSV1 allowed).
func readFrameRules(br *bufio.Reader, rules ws.Rules) (ws.Header, []byte, error) {
	var hb []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			return ws.Header{}, nil, err
		}
		hb = append(hb, b)
		h, _, err := ws.ParseHeader(hb, rules)
		if err == ws.ErrNeedMore {
			continue
		}
		if err != nil {
			return h, nil, err
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(br, p); err != nil {
			return h, nil, err
		}
		if h.Masked {
			ws.Mask(h.Mask, 0, p)
		}
		return h, p, nil
	}
}

// expectClose reads frames up to a close frame and checks its code, then
// that the server closes the socket.
func (c *rawClient) expectClose(code ws.CloseCode) {
	c.t.Helper()
	for {
		h, p := c.read()
		if h.Opcode != ws.OpClose {
			continue
		}
		got, reason, err := ws.ParseClose(p)
		if err != nil || got != code {
			c.t.Fatalf("close frame %d %q (%v), want code %d", got, reason, err, code)
		}
		break
	}
	if _, err := c.br.ReadByte(); err != io.EOF {
		c.t.Fatalf("after the close frame: %v, want the server to close the connection (EOF)", err)
	}
	c.nc.Close()
}

// closePayload is a close frame's payload.
func closePayload(code ws.CloseCode, reason string) []byte {
	return ws.AppendClose(nil, code, reason)
}

// pattern fills a message that says which writer sent it, so that a
// reader can check it came whole: "g/i:" and then the byte i%251.
func pattern(g, i, n int) []byte {
	b := fmt.Appendf(nil, "%d/%d:", g, i)
	for len(b) < n {
		b = append(b, byte('a'+(len(b)+i)%26))
	}
	return b
}

func testCtxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// dialTest connects to addr, closed when the test ends, with a deadline d
// away so that a hang cannot outlive the test.
func dialTest(t *testing.T, addr string, d time.Duration) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(d))
	return nc
}

// echoWhole writes a message of type typ and n bytes and checks that the
// echo read back is the same; it returns the message.
func echoWhole(t *testing.T, ctx context.Context, c *Conn, typ MessageType, n int) []byte {
	t.Helper()
	msg := pattern(0, n, n)[:n]
	if err := c.Write(ctx, typ, msg); err != nil {
		t.Fatal(err)
	}
	gt, got, err := c.Read(ctx)
	if err != nil || gt != typ || !bytes.Equal(got, msg) {
		t.Fatalf("%s of %d bytes: got %s of %d bytes, %v", typ, n, gt, len(got), err)
	}
	return msg
}
