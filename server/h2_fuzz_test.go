package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// FuzzServerH2 feeds random frames, in random read sizes, after the
// client preface, to a live native HTTP/2 connection (an in-memory
// conn), on both APIs. For any input: no panic; the connection ends by
// itself once the input does (no hang); bounded output; the output is a
// sequence of whole frames; and every header block the server sent
// decodes, in order, with one HPACK decoder, so the encoder's table
// never went out of step with what the client would see (frames of
// concurrent streams are queued from several goroutines).
func FuzzServerH2(f *testing.F) {
	var enc h2.Encoder
	get := func(method, path string) []byte {
		b := enc.StartBlock(nil)
		b = enc.AppendField(b, ":method", method)
		b = enc.AppendField(b, ":scheme", "http")
		b = enc.AppendField(b, ":authority", "example.com")
		b = enc.AppendField(b, ":path", path)
		return enc.AppendField(b, "user-agent", "fuzz")
	}
	es, eh := h2.FlagEndStream, h2.FlagEndHeaders
	seeds := [][]byte{
		h2.AppendHeaders(h2.AppendSettings(nil), 1, es|eh, h2.Priority{}, get("GET", "/"), 0),
		h2.AppendData(h2.AppendData(h2.AppendHeaders(h2.AppendSettings(nil), 1, eh, h2.Priority{}, get("POST", "/echo"), 0), 1, 0, []byte("hello"), 0), 1, es, []byte(" world"), 3),
		h2.AppendRSTStream(h2.AppendHeaders(h2.AppendSettings(nil), 3, eh, h2.Priority{}, get("POST", "/"), 0), 3, h2.ErrCodeCancel),
		h2.AppendContinuation(h2.AppendHeaders(h2.AppendSettings(nil), 1, es, h2.Priority{}, get("GET", "/a")[:3], 0), 1, eh, get("GET", "/a")[3:]),
		h2.AppendPing(h2.AppendSettingsAck(h2.AppendSettings(nil, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1})), 0, [8]byte{1}),
		h2.AppendWindowUpdate(h2.AppendPriority(h2.AppendSettings(nil), 5, h2.Priority{StreamDep: 1, Weight: 3}), 0, 1<<20),
		h2.AppendGoAway(h2.AppendHeaders(h2.AppendSettings(nil), 1, es|eh, h2.Priority{}, get("HEAD", "/big"), 0), 1, h2.ErrCodeNo, nil),
	}
	for i, s := range seeds {
		f.Add(s, uint8(i*7), i%2 == 0)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		w.Header().Set("X-Path", r.URL.Path)
		if r.URL.Path == "/big" {
			w.Write(make([]byte, 40<<10))
		}
		fmt.Fprintf(w, "%s %d %v", r.Method, len(b), err)
	})
	native := func(c *Ctx) {
		n, err := io.Copy(io.Discard, c.Body())
		c.SetHeaderBytes("X-Path", c.Path())
		if string(c.Path()) == "/big" {
			c.Write(make([]byte, 40<<10))
		}
		fmt.Fprintf(c, "%s %d %v", c.Method(), n, err)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8, handlerAPI bool) {
		input := append([]byte(h2.ClientPreface), data...)
		fc := &fakeConn{input: input, repeat: 1, readSize: 1 + int(split%64), keep: true}
		s := &Server{ErrorLog: discardLog, MaxRequestBodyBytes: 64 << 10}
		if handlerAPI {
			s.Handler = handler
		} else {
			s.Native = native
		}
		s.resolve()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.serveH2(fc, nil, nil, context.Background(), nil)
		}()
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			t.Fatalf("the connection did not end after its input did: %q", data)
		}
		out := fc.out
		if len(out) > 16*len(input)+(1<<20) {
			t.Fatalf("%d bytes of output for %d of input", len(out), len(input))
		}
		var dec h2.Decoder
		var block []byte
		for len(out) > 0 {
			fr, n, err := h2.ReadFrame(out, h2.MaxFrameSizeLimit)
			if err != nil {
				t.Fatalf("the server wrote a frame that does not read back: %v\ninput %q", err, data)
			}
			out = out[n:]
			if fr.Type == h2.FrameHeaders || fr.Type == h2.FrameContinuation {
				block = append(block, fr.BlockFragment()...)
				if fr.Flags.Has(h2.FlagEndHeaders) {
					if err := dec.Decode(block, func(h2.Field) {}); err != nil {
						t.Fatalf("a header block the server sent does not decode: %v\ninput %q", err, data)
					}
					block = block[:0]
				}
			}
		}
	})
}
