package websocket

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// FuzzConnRead feeds arbitrary client bytes to a server Conn (as bytes
// read with the request, then a closed socket) and reads until the
// connection ends: no panic, no hang, and every error is a close or a
// failure with a code.
func FuzzConnRead(f *testing.F) {
	k := [4]byte{1, 2, 3, 4}
	f.Add(ws.AppendClientFrame(nil, ws.OpText, true, k, []byte("hello")))
	f.Add(append(ws.AppendClientFrame(nil, ws.OpText, false, k, []byte("he")),
		append(ws.AppendClientFrame(nil, ws.OpPing, true, k, []byte("p")),
			ws.AppendClientFrame(nil, ws.OpContinuation, true, k, []byte("llo"))...)...))
	f.Add(ws.AppendClientFrame(nil, ws.OpText, true, k, []byte("\xff")))
	f.Add(ws.AppendClientFrame(nil, ws.OpClose, true, k, closePayload(1000, "bye")))
	f.Add(ws.AppendClientFrame(nil, ws.OpBinary, true, k, make([]byte, 300)))
	f.Add([]byte{0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := net.Pipe()
		go io.Copy(io.Discard, b) // the server's pongs and close frame
		c := newConn(a, false, "", Options{ReadLimit: 1 << 16, MaxFrame: 1 << 16, CloseTimeout: time.Second}, in, negotiated{})
		b.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for range 1000 {
			_, msg, err := c.Read(ctx)
			if err != nil {
				if code := CloseStatus(err); code == 0 {
					t.Fatalf("Read: %v, with no close code", err)
				}
				return
			}
			if len(msg) > 1<<16 {
				t.Fatalf("a message of %d bytes past the 64 KiB limit", len(msg))
			}
		}
		t.Fatal("1000 messages from a finite input")
	})
}
