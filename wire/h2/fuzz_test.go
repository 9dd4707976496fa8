package h2

// Fuzz targets for the frame reader and the HPACK decoder, seeded from
// testdata/fuzz/ and the examples below. What must hold for any input:
//
// FuzzFrame:
//   - ReadFrame never panics, never reports more bytes than it was given,
//     and fails only with ErrNeedMore or an *Error with a reason;
//   - a frame it reads, re-encoded with the Append functions, gives the
//     same bytes, but for what a reader drops: the reserved bits of stream
//     identifiers and the content of padding (sent as zeros);
//   - x/net's Framer reads what it reads and refuses what it refuses, with
//     the same error code (see TestFrameErrorsAgainstXNet for the one
//     difference).
//
// FuzzHPACK:
//   - Decode never panics, and its memory stays within its limits;
//   - over two blocks (the dynamic table carries over), where x/net's
//     decoder accepts a block, ours yields the same fields, and where ours
//     accepts one, x/net's does; but x/net accepts a size update after a
//     field while its table is empty, which RFC 7541 §4.2 forbids and we
//     refuse, and refuses a second size update at the start of a block
//     once its table holds entries, which §4.2 allows and we accept;
//   - the fields, encoded again by our Encoder, decode to themselves.

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

func FuzzFrame(f *testing.F) {
	for _, seed := range frameSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		for len(b) > 0 {
			fr, n, err := ReadFrame(b, DefaultMaxFrameSize)
			if n < 0 || n > len(b) {
				t.Fatalf("n = %d for %d bytes", n, len(b))
			}
			var e *Error
			switch {
			case err == nil:
			case err == ErrNeedMore:
				return
			case errors.As(err, &e):
				if e.Reason == "" {
					t.Fatalf("%v: empty reason", err)
				}
			default:
				t.Fatalf("error %v (%T)", err, err)
			}
			raw := b[:FrameHeaderLen+int(fr.Length)]
			if len(b) >= FrameHeaderLen {
				h, _ := ParseFrameHeader(b)
				if int(h.Length)+FrameHeaderLen <= len(b) {
					raw = b[:FrameHeaderLen+int(h.Length)]
					if h.Type != FrameContinuation && h.Type < 0x10 {
						compareFrameErrors(t, raw)
					}
				}
			}
			if err != nil && n == 0 {
				return
			}
			// A frame that reads whole is never read from a prefix.
			for _, k := range []int{0, FrameHeaderLen - 1, FrameHeaderLen, n - 1} {
				if k >= 0 && k < n {
					if _, m, perr := ReadFrame(b[:k], DefaultMaxFrameSize); perr != ErrNeedMore || m != 0 {
						t.Fatalf("ReadFrame of %d of the frame's %d bytes = %d, %v", k, n, m, perr)
					}
				}
			}
			if err == ErrPriorityLength {
				b = b[n:] // a stream error: skipped, not re-encoded
				continue
			}
			if got, want := reencode(&fr), canonical(raw, &fr); !bytes.Equal(got, want) {
				t.Fatalf("%v frame %x re-encodes to %x", fr.Type, want, got)
			}
			b = b[n:]
		}
		if !bytes.Equal(orig, append(orig[:0:0], orig...)) {
			t.Fatal("input modified")
		}
	})
}

// reencode writes f again with the Append functions.
func reencode(f *Frame) []byte {
	pad := uint8(f.PadLength())
	switch f.Type {
	case FrameData:
		return AppendData(nil, f.StreamID, f.Flags, f.Data(), pad)
	case FrameHeaders:
		p, _ := f.Priority()
		return AppendHeaders(nil, f.StreamID, f.Flags, p, f.BlockFragment(), pad)
	case FramePriority:
		p, _ := f.Priority()
		b := AppendPriority(nil, f.StreamID, p)
		b[4] = byte(f.Flags) // flags PRIORITY does not define, kept as read
		return b
	case FrameRSTStream:
		b := AppendRSTStream(nil, f.StreamID, f.ErrCode())
		b[4] = byte(f.Flags)
		return b
	case FrameSettings:
		var ss []Setting
		for i := range f.NumSettings() {
			ss = append(ss, f.Setting(i))
		}
		b := AppendSettings(nil, ss...)
		b[4] = byte(f.Flags)
		return b
	case FramePushPromise:
		return AppendPushPromise(nil, f.StreamID, f.Flags, f.PromisedID(), f.BlockFragment(), pad)
	case FramePing:
		return AppendPing(nil, f.Flags, f.PingData())
	case FrameGoAway:
		b := AppendGoAway(nil, f.LastStreamID(), f.ErrCode(), f.DebugData())
		b[4] = byte(f.Flags)
		return b
	case FrameWindowUpdate:
		b := AppendWindowUpdate(nil, f.StreamID, f.Increment())
		b[4] = byte(f.Flags)
		return b
	case FrameContinuation:
		return AppendContinuation(nil, f.StreamID, f.Flags, f.BlockFragment())
	}
	return append(AppendFrameHeader(nil, f.FrameHeader), f.Payload...)
}

// canonical returns raw as our appenders would write it: reserved bits
// clear, padding zeroed.
func canonical(raw []byte, f *Frame) []byte {
	c := bytes.Clone(raw)
	c[5] &= 0x7f
	p := c[FrameHeaderLen:]
	switch f.Type {
	case FramePushPromise:
		off := 0
		if f.Flags.Has(FlagPadded) {
			off = 1
		}
		p[off] &= 0x7f
	case FrameGoAway, FrameWindowUpdate:
		p[0] &= 0x7f
	}
	if pad := f.PadLength(); pad > 0 {
		clear(p[len(p)-pad:])
	}
	return c
}

// frameSeeds are one well-formed frame of each type, and a few that break
// a rule.
func frameSeeds() [][]byte {
	var all [][]byte
	add := func(b []byte) { all = append(all, b) }
	add([]byte(ClientPreface))
	add(AppendData(nil, 1, FlagEndStream|FlagPadded, []byte("hello"), 3))
	add(AppendHeaders(nil, 3, FlagEndHeaders|FlagPriority|FlagPadded, Priority{StreamDep: 1, Exclusive: true, Weight: 200}, []byte{0x82, 0x86, 0x84}, 2))
	add(AppendHeaders(nil, 1, FlagEndHeaders|FlagEndStream, Priority{}, []byte{0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff}, 0))
	add(AppendPriority(nil, 5, Priority{StreamDep: 3, Weight: 7}))
	add(AppendRSTStream(nil, 5, ErrCodeCancel))
	add(AppendSettings(nil, Setting{SettingMaxFrameSize, 1 << 20}, Setting{SettingEnablePush, 0}, Setting{SettingInitialWindowSize, 1 << 30}))
	add(AppendSettingsAck(nil))
	add(AppendPushPromise(nil, 1, FlagEndHeaders|FlagPadded, 2, []byte{0x84}, 1))
	add(AppendPing(nil, FlagAck, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	add(AppendGoAway(nil, 7, ErrCodeEnhanceYourCalm, []byte("calm")))
	add(AppendWindowUpdate(nil, 0, 1<<20))
	add(AppendContinuation(nil, 3, FlagEndHeaders, []byte{0x87}))
	add(append(AppendHeaders(nil, 1, 0, Priority{}, []byte{0x82}, 0), AppendContinuation(nil, 1, FlagEndHeaders, []byte{0x84})...))
	add(AppendFrameHeader(nil, FrameHeader{Length: 3, Type: 0xee, Flags: 0xff, StreamID: 9}))
	return all
}

func FuzzHPACK(f *testing.F) {
	var e Encoder
	for _, fs := range [][][2]string{
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {":authority", "example.com"}, {"user-agent", "curl/8.5.0"}, {"accept", "*/*"}},
		{{":status", "200"}, {"content-type", "text/plain; charset=utf-8"}, {"content-length", "13"}, {"date", "Mon, 23 Nov 2026 10:00:00 GMT"}},
		{{"authorization", "Bearer x"}, {"cookie", "a=b"}, {"x-Upper", "\x00\xff"}},
	} {
		b := e.StartBlock(nil)
		for _, kv := range fs {
			b = e.AppendField(b, kv[0], kv[1])
		}
		f.Add(append([]byte{byte(len(b))}, append(b, b...)...)) // the same block twice: indexed the second time
	}
	f.Add([]byte("\x04\x3f\xe1\x1f\x82\x20")) // size update after a field in block two
	f.Add([]byte("\x00\x40\x81\x00\x00"))     // bad Huffman padding
	f.Fuzz(fuzzHPACK)
}

// fuzzLimit bounds what one input may decode to, for both decoders.
const fuzzLimit = 1 << 18

func fuzzHPACK(t *testing.T, in []byte) {
	if len(in) == 0 {
		return
	}
	split := 1 + int(in[0])
	if split > len(in) {
		split = len(in)
	}
	blocks := [][]byte{in[1:split], in[split:]}
	d := Decoder{MaxHeaderListSize: fuzzLimit, MaxStringLength: fuzzLimit}
	var xfields []hpack.HeaderField
	xsize := 0
	xd := hpack.NewDecoder(DefaultMaxTableSize, func(f hpack.HeaderField) {
		xsize += int(f.Size())
		if xsize <= fuzzLimit {
			xfields = append(xfields, f)
		}
	})
	xd.SetMaxStringLength(fuzzLimit)
	for i, block := range blocks {
		xfields, xsize = xfields[:0], 0
		_, xerr := xd.Write(block)
		if xerr == nil {
			xerr = xd.Close()
		}
		fs, err := d.AppendFields(nil, block)
		if cap(d.arena) > 2*fuzzLimit+1<<16 {
			t.Fatalf("arena grew to %d bytes", cap(d.arena))
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Reason == "") {
			t.Fatalf("error %v (%T)", err, err)
		}
		if err == ErrHeaderListTooLarge || err == ErrHPACKBomb || xsize > fuzzLimit {
			return // one cut the list short; both read the block
		}
		if xerr == nil && (err == ErrLateSizeUpdate || err == ErrMissingSizeUpdate) {
			return // our documented stricter rules (see doc.go)
		}
		if err == nil && xerr != nil && strings.Contains(xerr.Error(), "beginning of a header block") {
			// x/net refuses a second size update at the start of a block
			// once its table holds entries; RFC 7541 §4.2 allows two.
			return
		}
		if (err == nil) != (xerr == nil) {
			t.Fatalf("block %d %x: ours %v, x/net %v", i, block, err, xerr)
		}
		if err != nil {
			return
		}
		if len(fs) != len(xfields) {
			t.Fatalf("block %d %x: %d fields, x/net %d", i, block, len(fs), len(xfields))
		}
		for j, f := range fs {
			x := xfields[j]
			if string(f.Name) != x.Name || string(f.Value) != x.Value || f.Sensitive != x.Sensitive {
				t.Fatalf("block %d %x field %d: %q: %q %v, x/net %+v", i, block, j, f.Name, f.Value, f.Sensitive, x)
			}
		}
		roundTrip(t, fs)
		for _, trailers := range []bool{false, true} {
			// The validator takes any fields without panicking, and
			// accepts none that break its simplest rules.
			v, verr := ValidateRequest(fs, trailers, true)
			if verr == nil {
				for _, f := range fs {
					if checkValue(f.Value) != nil || len(f.Name) == 0 || f.Name[0] != ':' && checkName(f.Name) != nil {
						t.Fatalf("validator accepted %q: %q", f.Name, f.Value)
					}
				}
				if !trailers && v.Method == nil {
					t.Fatal("validator accepted a request without :method")
				}
			}
		}
	}
}

// roundTrip encodes fs with a fresh Encoder and decodes them again.
func roundTrip(t *testing.T, fs []Field) {
	var e Encoder
	b := e.StartBlock(nil)
	for _, f := range fs {
		b = e.AppendFieldBytes(b, f.Name, f.Value)
	}
	d := Decoder{MaxHeaderListSize: 2 * fuzzLimit, MaxStringLength: fuzzLimit}
	got, err := d.AppendFields(nil, b)
	if err != nil || len(got) != len(fs) {
		t.Fatalf("round trip: %d fields, %v", len(got), err)
	}
	for i := range fs {
		if !bytes.Equal(got[i].Name, fs[i].Name) || !bytes.Equal(got[i].Value, fs[i].Value) {
			t.Fatalf("round trip field %d: %q: %q, want %q: %q", i, got[i].Name, got[i].Value, fs[i].Name, fs[i].Value)
		}
	}
}
