package client

// The HTTP/2 client on wire/h2's client half (ClientStreams,
// PeerSettings, the request encoder), where it used to differ from the
// load generator's: the server's preface, HEADER_TABLE_SIZE, and the
// SETTINGS that take a stream's send window past 2^31-1.

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// TestH2ServerPrefaceNotSettings: the server's connection preface is a
// SETTINGS frame (RFC 9113 §3.4); a server whose first frame is anything
// else gets GOAWAY with PROTOCOL_ERROR, as the load generator has always
// done. (The client used to take such a server's frames.)
func TestH2ServerPrefaceNotSettings(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	goaway := make(chan h2.ErrCode, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		if _, err := io.ReadFull(nc, make([]byte, len(h2.ClientPreface))); err != nil {
			return
		}
		nc.Write(h2.AppendPing(nil, 0, [8]byte{}))
		c := &rawH2{nc: nc, rbuf: make([]byte, 1<<16)}
		if f, err := c.await(h2.FrameGoAway); err == nil {
			goaway <- f.code
		}
		c.drain()
	}()
	cc := dialH2C(t, &Transport{}, ln.Addr().String())
	// The connection may have failed already (the PING read first): then
	// it has no stream to give, which fails the request as well.
	if cc.reserve() {
		req := newReq(t, "GET", "http://"+ln.Addr().String()+"/", nil)
		if _, err := cc.roundTrip(req, req.Context(), time.Time{}); err == nil {
			t.Error("a request on a connection whose server sent PING before SETTINGS succeeded")
		}
	}
	expectGoAway(t, goaway, h2.ErrCodeProtocol, "a preface that is not SETTINGS")
}

// expectGoAway waits for the code of the GOAWAY a scripted server read.
func expectGoAway(t *testing.T, goaway <-chan h2.ErrCode, want h2.ErrCode, what string) {
	t.Helper()
	expectFrame(t, "GOAWAY", goaway, want, what)
}

// expectReset waits up to 5 s for the code of the client's RST_STREAM on
// resets and checks it.
func expectReset(t *testing.T, resets <-chan h2.ErrCode, want h2.ErrCode, what string) {
	t.Helper()
	expectFrame(t, "RST_STREAM", resets, want, what)
}

func expectFrame(t *testing.T, frame string, codes <-chan h2.ErrCode, want h2.ErrCode, what string) {
	t.Helper()
	select {
	case code := <-codes:
		if code != want {
			t.Errorf("%s: %s code %v, want %v", what, frame, code, want)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("%s: no %s from the client", what, frame)
	}
}

// TestH2HeaderTableSizeZero: the server's SETTINGS_HEADER_TABLE_SIZE of 0
// reaches the encoder (through PeerSettings.Apply): the next block starts
// with a size update to 0 and indexes nothing, which a strict decoder
// with a table of 0 bytes checks.
func TestH2HeaderTableSizeZero(t *testing.T) {
	got := make(chan string, 2)
	ready := make(chan struct{})
	addr := rawH2Server(t, []h2.Setting{{ID: h2.SettingHeaderTableSize, Val: 0}}, func(c *rawH2) {
		// Once the PING is answered the SETTINGS before it are applied:
		// from here the client's blocks must fit a table of 0.
		c.write(h2.AppendPing(nil, 0, [8]byte{1}))
		if _, err := c.await(h2.FramePing); err != nil {
			return
		}
		c.dec.SetMaxTableSize(0)
		close(ready)
		for range 2 {
			f, err := c.await(h2.FrameHeaders)
			if err != nil {
				got <- "decoding: " + err.Error()
				return
			}
			got <- f.fields["x-repeat"]
			c.headers(f.StreamID, true, ":status", "204")
		}
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	<-ready
	for i := range 2 {
		req := newReq(t, "GET", "http://"+addr+"/", nil)
		req.Header.Set("X-Repeat", "same value each time")
		resp, err := send(t, cc, req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Body.Close()
		if v := <-got; v != "same value each time" {
			t.Fatalf("request %d: the server read x-repeat %q", i, v)
		}
	}
}

// TestH2InitialWindowOverflow: a SETTINGS_INITIAL_WINDOW_SIZE change that
// takes an open stream's send window past 2^31-1 is a connection error
// FLOW_CONTROL_ERROR (§6.9.2): GOAWAY, and the request fails.
func TestH2InitialWindowOverflow(t *testing.T) {
	goaway := make(chan h2.ErrCode, 1)
	addr := rawH2Server(t, nil, func(c *rawH2) {
		f, err := c.await(h2.FrameHeaders)
		if err != nil {
			return
		}
		c.write(h2.AppendWindowUpdate(nil, f.StreamID, h2.MaxWindowSize-h2.DefaultInitialWindowSize))
		c.write(h2.AppendSettings(nil, h2.Setting{ID: h2.SettingInitialWindowSize, Val: h2.DefaultInitialWindowSize + 1}))
		if f, err := c.await(h2.FrameGoAway); err == nil {
			goaway <- f.code
		}
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	pr, pw := io.Pipe()
	defer pw.Close()
	req := newReq(t, "POST", "http://"+addr+"/", pr) // open until the body ends
	_, err := send(t, cc, req)
	if err == nil || errors.Is(err, errH2Retry) || !strings.Contains(err.Error(), "FLOW_CONTROL") {
		t.Errorf("request: %v, want the connection's FLOW_CONTROL_ERROR", err)
	}
	expectGoAway(t, goaway, h2.ErrCodeFlowControl, "a window taken past 2^31-1")
}
