package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

func mappedBytes() int64 { return h2MappedBytes.Load() }

// checkMapped checks that the file bodies went by reference over h2c (3
// MiB of them at least, one file of TestFileAndBigBodies), and were
// copied over TLS.
func checkMapped(t *testing.T, base string, mapped int64) {
	t.Helper()
	tls := strings.HasPrefix(base, "https:")
	if tls && mapped != 0 {
		t.Errorf("%d bytes sent from a mapped file over TLS", mapped)
	}
	if !tls && mapped < 3<<20 {
		t.Errorf("only %d bytes sent from mapped files over h2c", mapped)
	}
}

// A file truncated while its mapped pages wait in the write queue: the
// kernel's write fails (EFAULT, never a SIGBUS in the server), that
// stream alone is reset (INTERNAL_ERROR, as net/http fails a stream whose
// file shrank), and the connection goes on serving.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2FileTruncatedWhileSent(t *testing.T) {
	path := fileOf(t, bytes.Repeat([]byte("x"), 16<<20))
	copied := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			io.WriteString(w, "still serving")
			return
		}
		copied <- sendFile(w, path)
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
	rst := readFrames(t, c, func(f *h2.Frame) bool {
		if f.Type == h2.FrameGoAway {
			t.Fatalf("GOAWAY %v: the connection ends for one stream's file", f.ErrCode())
		}
		if f.Type == h2.FrameData {
			got += len(f.Payload)
		}
		return f.Type == h2.FrameRSTStream && f.StreamID == 1
	})
	if rst.ErrCode() != h2.ErrCodeInternal {
		t.Errorf("stream reset with %v, want INTERNAL_ERROR", rst.ErrCode())
	}
	if got >= 16<<20 {
		t.Fatalf("the stream carried %d bytes of a file truncated to 0", got)
	}
	select {
	case err := <-copied:
		if err == nil {
			t.Error("io.Copy of the truncated file reported no error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler's io.Copy did not return")
	}
	// The same connection serves the next request.
	c.Write(h2.AppendHeaders(nil, 3, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(&enc, "/other"), 0))
	var body []byte
	readFrames(t, c, func(f *h2.Frame) bool {
		if f.Type == h2.FrameGoAway {
			t.Fatalf("GOAWAY %v", f.ErrCode())
		}
		if f.Type == h2.FrameData && f.StreamID == 3 {
			body = append(body, f.Payload...)
		}
		return f.Type == h2.FrameData && f.StreamID == 3 && f.Flags.Has(h2.FlagEndStream)
	})
	if string(body) != "still serving" {
		t.Fatalf("next request on the connection: %q", body)
	}
}

// The connection closed under two file downloads whose pages wait in the
// write queue: the writer's writev fails, and both handlers' io.Copy
// return (waitWritten is woken by the writer's end, not left waiting for
// a batch nobody will write).
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2FileConnectionLost(t *testing.T) {
	path := fileOf(t, bytes.Repeat([]byte("y"), 16<<20))
	done := make(chan error, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { done <- sendFile(w, path) })
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

// Downloads that a client stalls hold little of the file mapped: a
// stream maps nothing while its send windows are shut, maps no more than
// the windows allow (at least h2MapMin) once they open, and a connection
// maps for h2MaxMappedPerConn streams at most (the others copy). Mapping
// 8 MiB with MAP_POPULATE per stream up front, 10,000 stalled streams
// held 10,232 mappings and 161 MB of page tables.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2StalledDownloadsMapLittle(t *testing.T) {
	path := fileOf(t, bytes.Repeat([]byte("m"), 32<<20))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		sendFile(w, path)
	})
	s := &Server{Handler: h, WriteStallTimeout: time.Minute}
	const streams = 20
	open := func(c net.Conn, settings []byte) {
		var enc h2.Encoder
		b := settings
		for i := range streams {
			b = h2.AppendHeaders(b, uint32(2*i+1), h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	// maps returns the mappings of the file and the largest one's size.
	maps := func() (n int, largest int64) {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if !strings.HasSuffix(line, path) {
				continue
			}
			var lo, hi int64
			fmt.Sscanf(line, "%x-%x", &lo, &hi)
			n++
			largest = max(largest, hi-lo)
		}
		return n, largest
	}
	// Shut windows: every stream waits for a WINDOW_UPDATE, none maps.
	shut := rawH2(t, s)
	open(shut, h2.AppendSettings(nil, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 0}))
	heads := 0
	readFrames(t, shut, func(f *h2.Frame) bool {
		if f.Type == h2.FrameHeaders {
			heads++
		}
		return heads == streams
	})
	time.Sleep(50 * time.Millisecond)
	if n, _ := maps(); n != 0 {
		t.Errorf("%d mappings of the file for %d streams whose windows are shut, want 0", n, streams)
	}
	// Default 64 KiB stream windows, and a connection window for all:
	// each stream sends its 64 KiB and stalls.
	c, err := net.Dial("tcp", shut.RemoteAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pre := append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)
	pre = h2.AppendWindowUpdate(pre, 0, streams*h2.DefaultInitialWindowSize)
	open(c, pre)
	got := map[uint32]int{}
	full := 0
	readFrames(t, c, func(f *h2.Frame) bool {
		if f.Type == h2.FrameData {
			if got[f.StreamID] += len(f.Payload); got[f.StreamID] == h2.DefaultInitialWindowSize {
				full++
			}
		}
		return full == streams
	})
	time.Sleep(50 * time.Millisecond)
	n, largest := maps()
	if n > h2MaxMappedPerConn {
		t.Errorf("%d mappings of the file for %d stalled streams, want at most %d", n, streams, h2MaxMappedPerConn)
	}
	if page := int64(os.Getpagesize()); largest > h2MapMin+page {
		t.Errorf("a stalled stream maps %d bytes of the file for a 64 KiB window, want at most %d", largest, h2MapMin+page)
	}
}
