package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// sockInt reads an int property of the server's side of a connection:
// a socket option, or with opt < 0 the bytes queued for reading.
func sockInt(t *testing.T, nc *net.TCPConn, opt int) int {
	rc, err := nc.SyscallConn()
	if err != nil {
		t.Error(err)
		return 0
	}
	var v int32
	var serr error
	err = rc.Control(func(fd uintptr) {
		if opt < 0 {
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&v))); e != 0 {
				serr = e
			}
			return
		}
		var x int
		x, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, opt)
		v = int32(x)
	})
	if err != nil || serr != nil {
		t.Error(err, serr)
	}
	return int(v)
}

func rcvLowat(t *testing.T, nc *net.TCPConn) int { return sockInt(t, nc, syscall.SO_RCVLOWAT) }

// setMarkIdle sets the mark's watchdog period for one test.
func setMarkIdle(t *testing.T, d time.Duration) {
	old := markIdle.Swap(int64(d))
	t.Cleanup(func() { markIdle.Store(old) })
}

// markUpload is a handler for the mark tests: it waits for gate (so the
// client's first bytes back up in the socket and its reads come back
// full), then reads the body in 32 KiB pieces, publishing how much it
// read and the largest mark it saw on the server's socket, and answers
// the count. Past hijackAt bytes it hijacks, reads the rest of the
// first part from the hijacked connection, and answers each 4-byte ping
// with a pong. Past deadlineAt bytes it sets a read deadline of its own,
// 5 s away.
type markUpload struct {
	t          *testing.T
	server     atomic.Pointer[net.TCPConn] // the server's side of the connection
	gate       chan struct{}
	read       atomic.Int64
	maxMark    atomic.Int64
	part       int64
	hijackAt   int64
	deadlineAt int64
}

func (h *markUpload) sample(total int64, sampled *int64) {
	if total-*sampled >= 1<<20 {
		*sampled = total
		if m := int64(rcvLowat(h.t, h.server.Load())); m > h.maxMark.Load() {
			h.maxMark.Store(m)
		}
	}
}

// Native reads the body as the native API's users do, with io.Copy
// (which finds the body's WriteTo), into a sink that samples the mark.
func (h *markUpload) Native(c *Ctx) {
	<-h.gate
	var sampled int64
	n, err := io.Copy(sinkFunc(func(p []byte) { h.sample(h.read.Add(int64(len(p))), &sampled) }), c.Body())
	if err != nil {
		h.t.Errorf("body: %v after %d bytes", err, n)
		return
	}
	c.WriteString(strconv.FormatInt(n, 10))
}

type sinkFunc func([]byte)

func (f sinkFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func (h *markUpload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	<-h.gate
	buf := make([]byte, 32<<10)
	var total, sampled int64
	for {
		n, err := r.Body.Read(buf)
		total += int64(n)
		h.read.Add(int64(n))
		h.sample(total, &sampled)
		if h.deadlineAt > 0 && total >= h.deadlineAt {
			h.deadlineAt = 0
			if rcvLowat(h.t, h.server.Load()) <= 1 {
				h.t.Error("no mark in force when the handler sets its deadline")
			}
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(5 * time.Second))
		}
		if h.hijackAt > 0 && total >= h.hijackAt {
			h.hijack(w, total)
			return
		}
		if err == io.EOF {
			io.WriteString(w, strconv.FormatInt(total, 10))
			return
		}
		if err != nil {
			h.t.Errorf("body: %v after %d bytes", err, total)
			return
		}
	}
}

func (h *markUpload) hijack(w http.ResponseWriter, total int64) {
	if rcvLowat(h.t, h.server.Load()) <= 1 {
		h.t.Error("no mark in force when the handler hijacks")
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		h.t.Error(err)
		return
	}
	defer nc.Close()
	n, err := io.CopyN(io.Discard, brw, h.part-total)
	h.read.Add(n)
	if err != nil {
		h.t.Errorf("the rest of the part after the hijack: %v", err)
		return
	}
	ping := make([]byte, 4)
	for {
		if _, err := io.ReadFull(brw, ping); err != nil {
			return
		}
		nc.Write([]byte("pong"))
	}
}

// startMarkUpload serves a markUpload (on the native API with native)
// and sends the head of an upload of length bytes and its first part
// bytes, fast. It returns the client's connection once that part was
// delivered: read by the handler or queued on the server's socket.
func startMarkUpload(t *testing.T, h *markUpload, native bool, length, part int64) (net.Conn, *bufio.Reader) {
	t.Helper()
	h.t, h.gate, h.part = t, make(chan struct{}), part
	s := &Server{Handler: h, ErrorLog: discardLog, ReadStallTimeout: 30 * time.Second}
	if native {
		s = &Server{Native: h.Native, ErrorLog: discardLog, ReadStallTimeout: 30 * time.Second, MaxRequestBodyBytes: -1}
	}
	addr, conns := startRecorded(t, s)
	nc := dial(t, addr)
	server := (<-conns).(*net.TCPConn)
	// A receive buffer of a fixed size: the kernel's own sizing of it
	// depends on how fast the handler reads (slow under the race
	// detector), and a mark is at most a share of it.
	rc, err := server.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1<<20) })
	h.server.Store(server)
	fmt.Fprintf(nc, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", length)
	sent := make(chan error, 1)
	go func() {
		chunk := make([]byte, 1<<20)
		var err error
		for n := int64(0); n < part && err == nil; n += int64(len(chunk)) {
			_, err = nc.Write(chunk[:min(int64(len(chunk)), part-n)])
		}
		sent <- err
	}()
	time.Sleep(50 * time.Millisecond) // the socket's buffers fill meanwhile
	close(h.gate)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.read.Load()+int64(sockInt(t, server, -1)) < part {
		if time.Now().After(deadline) {
			t.Fatalf("the first part: the handler read %d of %d bytes", h.read.Load(), part)
		}
		time.Sleep(time.Millisecond)
	}
	if h.maxMark.Load() < markMinBytes {
		t.Fatalf("no receive mark during a fast upload (largest seen: %d)", h.maxMark.Load())
	}
	return nc, bufio.NewReader(nc)
}

func waitRead(t *testing.T, h *markUpload, want int64, limit time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for h.read.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the handler read %d of %d bytes in %v", what, h.read.Load(), want, limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestUploadMarkPause: a fast upload is read with a receive mark; when
// the client pauses below the mark, the watchdog drops it, so the bytes
// that did come reach the handler (not after the 30 s stall timeout).
// Then the rest arrives, the mark is gone after the body, and the
// connection serves its next request.
//
// Modes: HTTP/1.1, raw socket: the receive low-water mark is the HTTP/1.1
// engine's upload path (h1_rcvmark*.go).
func TestUploadMarkPause(t *testing.T) {
	setMarkIdle(t, 2*time.Second)
	const length, part = 48 << 20, 24 << 20
	h := &markUpload{}
	nc, br := startMarkUpload(t, h, false, length, part)
	if m := rcvLowat(t, h.server.Load()); m < markMinBytes {
		t.Fatalf("mark after the first part: %d", m) // the watchdog drops it 2 to 4 s after the last byte read
	}
	nc.Write(make([]byte, 1000))
	waitRead(t, h, part+1000, 10*time.Second, "bytes below the mark") // not the 30 s stall timeout
	rest := make([]byte, length-part-1000)
	if _, err := nc.Write(rest); err != nil {
		t.Fatal(err)
	}
	resp, body := readResponse(t, br, "POST")
	if resp.StatusCode != 200 || body != strconv.Itoa(length) {
		t.Fatalf("upload: %d %q", resp.StatusCode, body)
	}
	if m := rcvLowat(t, h.server.Load()); m != 1 {
		t.Fatalf("mark after the body: %d", m)
	}
	fmt.Fprintf(nc, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	if resp, body := readResponse(t, br, "POST"); resp.StatusCode != 200 || body != "5" {
		t.Fatalf("next request: %d %q", resp.StatusCode, body)
	}
}

// TestUploadMarkTail: the body's last bytes never wait for a mark they
// cannot reach: with the watchdog a minute away, the handler reads all
// but the last 100 KB (less than a mark) and waits for them; they come,
// and the answer with them. Both APIs: the native API's body, copied
// with io.Copy, is read in large reads as the handler API's is.
//
// Modes: HTTP/1.1, raw socket: the receive low-water mark is the HTTP/1.1
// engine's upload path (h1_rcvmark*.go).
func TestUploadMarkTail(t *testing.T) {
	setMarkIdle(t, time.Minute)
	for _, native := range []bool{false, true} {
		const length, tail = 32 << 20, 100 << 10
		h := &markUpload{}
		nc, br := startMarkUpload(t, h, native, length, length-tail)
		if _, err := nc.Write(make([]byte, tail)); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, body := readResponse(t, br, "POST")
		if resp.StatusCode != 200 || body != strconv.Itoa(length) {
			t.Fatalf("native %v: upload: %d %q", native, resp.StatusCode, body)
		}
	}
}

// TestUploadMarkHijack: a handler that hijacks in the middle of a fast
// upload reads its connection as any socket: the mark is dropped.
//
// Modes: HTTP/1.1, raw socket: the receive low-water mark is the HTTP/1.1
// engine's upload path (h1_rcvmark*.go).
func TestUploadMarkHijack(t *testing.T) {
	setMarkIdle(t, time.Minute)
	const length, part = 64 << 20, 24 << 20
	h := &markUpload{hijackAt: part - 8<<20}
	nc, _ := startMarkUpload(t, h, false, length, part)
	waitRead(t, h, part, 10*time.Second, "the part after the hijack")
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	pong := make([]byte, 4)
	for range 3 {
		nc.Write([]byte("ping"))
		if _, err := io.ReadFull(nc, pong); err != nil || string(pong) != "pong" {
			t.Fatalf("after the hijack: %q, %v", pong, err)
		}
	}
}

// TestUploadMarkOwnDeadline: once the handler sets a read deadline of its
// own (http.ResponseController), no mark holds bytes back from its
// reads: a deadline shorter than the watchdog would fire with them
// waiting.
//
// Modes: HTTP/1.1, raw socket: the receive low-water mark is the HTTP/1.1
// engine's upload path (h1_rcvmark*.go).
func TestUploadMarkOwnDeadline(t *testing.T) {
	setMarkIdle(t, time.Minute)
	const length, part = 48 << 20, 24 << 20
	h := &markUpload{deadlineAt: part - 8<<20}
	nc, br := startMarkUpload(t, h, false, length, part)
	waitRead(t, h, part, 3*time.Second, "the part after the deadline")
	nc.Write(make([]byte, 1000))
	waitRead(t, h, part+1000, 3*time.Second, "bytes after the deadline") // before the handler's 5 s deadline
	if _, err := nc.Write(make([]byte, length-part-1000)); err != nil {
		t.Fatal(err)
	}
	if resp, body := readResponse(t, br, "POST"); resp.StatusCode != 200 || body != strconv.Itoa(length) {
		t.Fatalf("upload: %d %q", resp.StatusCode, body)
	}
}
