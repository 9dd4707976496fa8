package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

func mappedBytes() int64 { return h2MappedBytes.Load() }

// checkMapped checks that the file bodies went by reference over h2c,
// and were copied over TLS.
func checkMapped(t *testing.T, base string, mapped int64) {
	t.Helper()
	tls := strings.HasPrefix(base, "https:")
	if tls && mapped != 0 {
		t.Errorf("%d bytes sent from a mapped file over TLS", mapped)
	}
	if !tls && mapped < 5<<20 {
		t.Errorf("only %d bytes sent from mapped files over h2c", mapped)
	}
}

// A file truncated while its mapped pages wait in the write queue: the
// kernel's write fails (EFAULT, never a SIGBUS in the server), the
// connection ends, and the server goes on serving.
func TestNativeH2FileTruncatedWhileSent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shrinks")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	copied := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			io.WriteString(w, "still serving")
			return
		}
		f, err := os.Open(path)
		if err != nil {
			copied <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		copied <- err
	})
	s := &Server{Handler: h, WriteStallTimeout: time.Minute}
	c := rawH2(t, s)
	var enc h2.Encoder
	if _, err := c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)); err != nil {
		t.Fatal(err)
	}
	// The client's windows are the default 64 KiB: the server sends that
	// much and waits, its first window of the file mapped.
	got := 0
	readFrames(t, c, func(f *h2.Frame) bool {
		if f.Type == h2.FrameData {
			got += len(f.Payload)
		}
		return got >= h2.DefaultInitialWindowSize-1
	})
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var b []byte
	b = h2.AppendWindowUpdate(b, 0, 32<<20)
	b = h2.AppendWindowUpdate(b, 1, 32<<20)
	c.Write(b)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if n >= 16<<20 {
		t.Fatalf("the connection carried %d bytes of a file truncated to 0", n)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the connection did not end")
	}
	select {
	case err := <-copied:
		if err == nil {
			t.Error("io.Copy of the truncated file reported no error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler's io.Copy did not return")
	}
	// The server lives on.
	c2, err := net.Dial("tcp", c.RemoteAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.Write([]byte(h2.ClientPreface))
	c2.Write(h2.AppendSettings(nil))
	c2.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(new(h2.Encoder), "/other"), 0))
	var body []byte
	readFrames(t, c2, func(f *h2.Frame) bool {
		if f.Type == h2.FrameData {
			body = append(body, f.Payload...)
		}
		return f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream)
	})
	if string(body) != "still serving" {
		t.Fatalf("next request: %q", body)
	}
}

// The connection closed under two file downloads whose pages wait in the
// write queue: the writer's writev fails, and both handlers' io.Copy
// return (waitWritten is woken by the writer's end, not left waiting for
// a batch nobody will write).
func TestNativeH2FileConnectionLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, bytes.Repeat([]byte("y"), 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		done <- err
	})
	c := rawH2(t, &Server{Handler: h})
	var enc h2.Encoder
	var b []byte
	b = h2.AppendWindowUpdate(b, 0, 64<<20) // room for both: the socket, not flow control, holds them
	for _, id := range []uint32{1, 3} {
		b = h2.AppendHeaders(b, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
		b = h2.AppendWindowUpdate(b, id, 32<<20)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	got := 0
	readFrames(t, c, func(f *h2.Frame) bool {
		if f.Type == h2.FrameData {
			got += len(f.Payload)
		}
		return got >= 1<<20
	})
	c.Close()
	for range 2 {
		select {
		case err := <-done:
			if err == nil {
				t.Error("a download cut by the connection's end reported no error")
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a handler's io.Copy did not return after the connection closed")
		}
	}
}

// WriteStallTimeout bounds a wait without progress, not a write: a client
// that reads a big download slowly but steadily (here 12 MiB, 32 KiB
// every 4 ms at most, through a 64 KiB socket buffer, with a 250 ms stall
// timeout and batches of up to 4 MiB of mapped pages: a batch takes
// longer than that to drain once the kernel's send buffer is full) gets
// all of it, from a mapped file and from memory; one that stops reading
// is cut.
func TestNativeH2SlowSteadyDownload(t *testing.T) {
	const size = 12 << 20
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, bytes.Repeat([]byte("z"), size), 0o644); err != nil {
		t.Fatal(err)
	}
	mem := bytes.Repeat([]byte("m"), size)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mem" {
			w.Write(mem)
			return
		}
		http.ServeFile(w, r, path)
	})
	s := &Server{Handler: h, WriteStallTimeout: 250 * time.Millisecond}
	c := rawH2(t, s)
	addr := c.RemoteAddr().String()
	c.Close()
	download := func(p string, pace bool) (int, error) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, err
		}
		defer nc.Close()
		nc.(*net.TCPConn).SetReadBuffer(64 << 10) // the pace, not the kernel, decides
		var enc h2.Encoder
		b := append([]byte(h2.ClientPreface), h2.AppendSettings(nil, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1 << 30})...)
		b = h2.AppendWindowUpdate(b, 0, 1<<30)
		b = h2.AppendHeaders(b, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(&enc, p), 0)
		nc.Write(b)
		if !pace {
			time.Sleep(time.Second) // read nothing: the server must give up
		}
		got := 0
		var buf []byte
		tmp := make([]byte, 32<<10)
		nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		for {
			if pace {
				time.Sleep(4 * time.Millisecond)
			}
			n, err := nc.Read(tmp)
			if n == 0 {
				return got, err
			}
			buf = append(buf, tmp[:n]...)
			for {
				f, k, err := h2.ReadFrame(buf, h2.MaxFrameSizeLimit)
				if err != nil {
					break
				}
				if f.Type == h2.FrameData {
					got += len(f.Payload)
				}
				if f.Type == h2.FrameRSTStream || f.Type == h2.FrameGoAway {
					return got, fmt.Errorf("%v %v", f.Type, f.ErrCode())
				}
				buf = buf[k:]
				if f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream) {
					return got, nil
				}
			}
		}
	}
	for _, p := range []string{"/file", "/mem"} {
		if got, err := download(p, true); got != size {
			t.Errorf("%s read slowly but steadily: %d of %d bytes, %v", p, got, size, err)
		}
	}
	if got, _ := download("/file", false); got >= size {
		t.Errorf("a client that stopped reading got the whole %d bytes: the stall timeout did not cut it", got)
	}
}
