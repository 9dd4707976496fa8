package h2_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// A server's view of a connection's first bytes: the preface, SETTINGS,
// and a GET in one HEADERS frame; then the frames of its response.
func Example() {
	in := clientBytes()
	if !strings.HasPrefix(string(in), h2.ClientPreface) {
		fmt.Println("not HTTP/2")
		return
	}
	in = in[len(h2.ClientPreface):]

	var dec h2.Decoder // one per connection: the client's HPACK context
	var enc h2.Encoder // and ours
	var v h2.RequestValidator
	var fields []h2.Field
	var out []byte
	for len(in) > 0 {
		f, n, err := h2.ReadFrame(in, h2.DefaultMaxFrameSize)
		var e *h2.Error
		if errors.As(err, &e) && !e.Stream {
			out = h2.AppendGoAway(out, 0, e.Code, []byte(e.Reason))
			break
		}
		in = in[n:]
		switch f.Type {
		case h2.FrameSettings:
			if !f.Flags.Has(h2.FlagAck) {
				for i := range f.NumSettings() {
					fmt.Println("setting", f.Setting(i).ID, f.Setting(i).Val)
				}
				out = h2.AppendSettingsAck(out)
			}
		case h2.FrameHeaders: // with END_HEADERS; else join the CONTINUATIONs
			fields, err = dec.AppendFields(fields[:0], f.BlockFragment())
			if err != nil {
				fmt.Println(err)
				return
			}
			v.Reset(false)
			for _, fl := range fields {
				if err = v.Field(fl); err != nil {
					break
				}
			}
			if err == nil {
				err = v.End()
			}
			if err != nil {
				out = h2.AppendRSTStream(out, f.StreamID, err.(*h2.Error).Code)
				continue
			}
			fmt.Printf("%s %s://%s%s\n", v.Method, v.Scheme, v.Authority, v.Path)

			block := enc.StartBlock(nil)
			block = enc.AppendField(block, ":status", "200")
			block = enc.AppendField(block, "content-type", "text/plain")
			out = h2.AppendHeaderBlock(out, f.StreamID, false, block, h2.DefaultMaxFrameSize)
			out = h2.AppendData(out, f.StreamID, h2.FlagEndStream, []byte("Hello, World!"), 0)
		}
	}
	for len(out) > 0 {
		f, n, _ := h2.ReadFrame(out, h2.DefaultMaxFrameSize)
		fmt.Println("sent", f.Type, f.Length)
		out = out[n:]
	}
	// Output:
	// setting MAX_CONCURRENT_STREAMS 100
	// setting INITIAL_WINDOW_SIZE 1048576
	// GET https://example.com/hello
	// sent SETTINGS 0
	// sent HEADERS 10
	// sent DATA 13
}

// clientBytes is what a client sends first.
func clientBytes() []byte {
	b := []byte(h2.ClientPreface)
	b = h2.AppendSettings(b, h2.Setting{ID: h2.SettingMaxConcurrentStreams, Val: 100}, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 1 << 20})
	var enc h2.Encoder
	block := enc.StartBlock(nil)
	for _, kv := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "example.com"}, {":path", "/hello"}} {
		block = enc.AppendField(block, kv[0], kv[1])
	}
	return h2.AppendHeaders(b, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, block, 0)
}
