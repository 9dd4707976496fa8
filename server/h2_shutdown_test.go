package server

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// A stream whose HEADERS the engine admitted just before Shutdown's
// GOAWAY is named in that GOAWAY (its last stream ID), so it must be
// answered: the connection keeps reading and stays open until its
// handler returns, though no handler ran yet when the GOAWAY went out.
// (Found under CPU stress: TestShutdownUnderLoadLosesNothing on h2c ran
// a handler whose response never reached its client, the connection
// having closed as if idle.) The handler takes a while, so that a
// connection closing early cannot be missed.
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames (rawH2)
// and a hook inside the engine's header-block handling: the window is
// the engine's own; HTTP/1.1 has no GOAWAY and the hand-off's HTTP/2 is
// net/http's.
func TestH2ShutdownAnswersStreamAdmittedBeforeGoAway(t *testing.T) {
	for _, native := range []bool{false, true} {
		name := map[bool]string{false: "handler", true: "native"}[native]
		t.Run(name, func(t *testing.T) {
			s := &Server{}
			if native {
				s.Native = func(c *Ctx) {
					time.Sleep(100 * time.Millisecond)
					c.WriteString("ok")
				}
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(100 * time.Millisecond)
					io.WriteString(w, "ok")
				})
			}
			shutdown := make(chan error, 1)
			goAwaySent := make(chan bool, 1)
			var once sync.Once
			s.testHookH2Admitted = func(sc *h2Conn) {
				once.Do(func() {
					go func() { shutdown <- s.Shutdown(context.Background()) }()
					goAwaySent <- eventually(func() bool {
						sc.mu.Lock()
						defer sc.mu.Unlock()
						return sc.goAway
					})
				})
			}
			c := rawH2(t, s)
			var enc h2.Encoder
			if _, err := c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)); err != nil {
				t.Fatal(err)
			}
			if !<-goAwaySent {
				t.Fatal("Shutdown sent no GOAWAY while the stream was being admitted")
			}
			var status, body []byte
			var last uint32 = 1 << 31
			var dec h2.Decoder
			readFrames(t, c, func(f *h2.Frame) bool {
				switch {
				case f.Type == h2.FrameGoAway:
					last = f.LastStreamID()
				case f.Type == h2.FrameHeaders && f.StreamID == 1:
					dec.Decode(f.BlockFragment(), func(fl h2.Field) {
						if string(fl.Name) == ":status" {
							status = append([]byte(nil), fl.Value...)
						}
					})
				case f.Type == h2.FrameData && f.StreamID == 1:
					body = append(body, f.Data()...)
				}
				return f.StreamID == 1 && f.Flags.Has(h2.FlagEndStream)
			})
			if last != 1 {
				t.Errorf("GOAWAY's last stream %d; want 1, the stream admitted before it", last)
			}
			if string(status) != "200" || string(body) != "ok" {
				t.Errorf("stream 1 answered %q %q; want 200 \"ok\"", status, body)
			}
			select {
			case err := <-shutdown:
				if err != nil {
					t.Fatalf("Shutdown: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Shutdown did not return after the stream was answered")
			}
		})
	}
}
