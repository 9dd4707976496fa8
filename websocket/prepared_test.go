package websocket

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
)

// TestWritePrepared: one message prepared once reaches every connection
// it is written to, on both servers, while other goroutines write to the
// same connections (no frame interleaves); a client connection sends it
// masked, as any client frame.
func TestWritePrepared(t *testing.T) {
	const n = 20
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			conns := make(chan *Conn, n)
			addr := e.start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := Accept(w, r, nil)
				if err != nil {
					t.Error(err)
					return
				}
				conns <- c
			}))
			ctx := testCtx(t)
			clients := make([]*Conn, n)
			servers := make([]*Conn, n)
			for i := range clients {
				c, _, err := Dial(ctx, "ws://"+addr, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.CloseNow() })
				clients[i] = c
				servers[i] = <-conns
			}
			big := pattern(1, 2, 100000)
			pm, err := NewPreparedMessage(MessageBinary, big)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, s := range servers {
				wg.Go(func() {
					if err := s.WritePrepared(ctx, pm); err != nil {
						t.Error(err)
					}
				})
				wg.Go(func() {
					if err := s.Write(ctx, MessageText, []byte("other")); err != nil {
						t.Error(err)
					}
				})
			}
			for i, c := range clients {
				seen := map[string]bool{}
				for range 2 {
					typ, got, err := c.Read(ctx)
					if err != nil {
						t.Fatal(err)
					}
					switch {
					case typ == MessageBinary && bytes.Equal(got, big):
						seen["prepared"] = true
					case typ == MessageText && string(got) == "other":
						seen["other"] = true
					default:
						t.Fatalf("client %d: %s of %d bytes", i, typ, len(got))
					}
				}
				if len(seen) != 2 {
					t.Fatalf("client %d got %v", i, seen)
				}
			}
			wg.Wait()
			// From a client: masked like any client frame (the server
			// fails unmasked ones with 1002), and echoed.
			srv := servers[0]
			go func() {
				typ, msg, err := srv.Read(ctx)
				if err == nil {
					srv.Write(ctx, typ, msg)
				}
			}()
			if err := clients[0].WritePrepared(ctx, pm); err != nil {
				t.Fatal(err)
			}
			if _, got, err := clients[0].Read(ctx); err != nil || !bytes.Equal(got, big) {
				t.Fatalf("a client's prepared message came back as %d bytes, %v", len(got), err)
			}
			if _, err := NewPreparedMessage(MessageType(9), nil); err == nil {
				t.Error("a prepared message of type 9")
			}
		})
	}
}
