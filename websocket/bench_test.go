package websocket

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// BenchmarkEcho: a 1 KiB binary message echoed by the server, on
// hotpath's server, with the event API and with a blocking Read loop.
// The client is a raw socket writing a prebuilt masked frame and reading
// the echo into a fixed buffer, so that allocs/op are the server's.
func BenchmarkEcho(b *testing.B) {
	for _, api := range []string{"events", "blocking"} {
		b.Run(api, func(b *testing.B) {
			var h http.Handler
			if api == "events" {
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					c, err := Accept(w, r, nil)
					if err == nil {
						c.Start(&echoEvents{})
					}
				})
			} else {
				h = echoHandler(nil, nil, nil)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			s := &server.Server{Handler: h}
			go s.Serve(ln)
			defer s.Close()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			if _, err := nc.Write([]byte(handshakeRequest("/"))); err != nil {
				b.Fatal(err)
			}
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 101 {
				b.Fatalf("handshake: %v %v", resp, err)
			}
			msg := make([]byte, 1024)
			frame := ws.AppendClientFrame(nil, ws.OpBinary, true, rawMask, msg)
			echo := make([]byte, len(ws.AppendServerFrame(nil, ws.OpBinary, true, msg)))
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := nc.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(br, echo); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
