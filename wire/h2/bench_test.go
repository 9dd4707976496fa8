package h2

import (
	"bytes"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// A browser's request and a small server's response, as the fields a
// connection's second request and response carry (the first warms the
// dynamic tables).
var (
	requestFields = [][2]string{
		{":method", "GET"},
		{":scheme", "https"},
		{":authority", "www.example.com"},
		{":path", "/assets/app.js?v=3"},
		{"user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"},
		{"accept", "*/*"},
		{"accept-encoding", "gzip, deflate, br"},
		{"accept-language", "en-US,en;q=0.9"},
		{"referer", "https://www.example.com/"},
		{"cookie", "session=6a1f0c9e2b7d4e58a3c1f0b9d8e7a6c5; theme=dark"},
	}
	responseFields = [][2]string{
		{":status", "200"},
		{"content-type", "text/plain; charset=utf-8"},
		{"content-length", "13"},
		{"date", "Mon, 23 Nov 2026 10:00:00 GMT"},
		{"server", "hotpath"},
	}
)

// xnetBlock encodes fields with x/net's encoder: the blocks real clients
// send (Go's, at least).
func xnetBlocks(fields [][2]string, n int) [][]byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	var blocks [][]byte
	for range n {
		buf.Reset()
		for _, f := range fields {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		blocks = append(blocks, bytes.Clone(buf.Bytes()))
	}
	return blocks
}

// warmBlock is the block of a connection's second request: mostly
// references to the first one's dynamic table entries.
func warmBlock() (first, second []byte) {
	b := xnetBlocks(requestFields, 2)
	return b[0], b[1]
}

func BenchmarkDecodeRequest(b *testing.B) {
	first, second := warmBlock()
	b.Run("hotpath", func(b *testing.B) {
		var d Decoder
		fs, _ := d.AppendFields(nil, first)
		b.ReportAllocs()
		b.SetBytes(int64(len(second)))
		for b.Loop() {
			// The same block every time: the table does not change, as
			// on a connection whose requests repeat.
			var err error
			if fs, err = d.AppendFields(fs[:0], second); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("xnet", func(b *testing.B) {
		n := 0
		d := hpack.NewDecoder(4096, func(hpack.HeaderField) { n++ })
		d.Write(first)
		b.ReportAllocs()
		b.SetBytes(int64(len(second)))
		for b.Loop() {
			if _, err := d.Write(second); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeRequestNew decodes a block whose fields are all new to
// the table (Huffman-coded literals, each inserted, evicting older ones),
// on a decoder whose buffers have grown: a first request, or one with
// fresh values.
func BenchmarkDecodeRequestNew(b *testing.B) {
	first, _ := warmBlock()
	b.Run("hotpath", func(b *testing.B) {
		var d Decoder
		d.MaxHeaderListSize = 1 << 20
		fs, _ := d.AppendFields(nil, first)
		b.ReportAllocs()
		b.SetBytes(int64(len(first)))
		for b.Loop() {
			var err error
			if fs, err = d.AppendFields(fs[:0], first); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("xnet", func(b *testing.B) {
		d := hpack.NewDecoder(4096, func(hpack.HeaderField) {})
		d.Write(first)
		b.ReportAllocs()
		b.SetBytes(int64(len(first)))
		for b.Loop() {
			if _, err := d.Write(first); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkHuffmanDecode(b *testing.B) {
	s := []byte(requestFields[4][1]) // a user-agent
	enc := huffmanAppend(nil, s)
	b.Run("hotpath", func(b *testing.B) {
		var dst []byte
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			dst, _ = huffmanDecode(dst[:0], enc, 1<<20)
		}
	})
	b.Run("xnet", func(b *testing.B) {
		var buf bytes.Buffer
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			buf.Reset()
			hpack.HuffmanDecode(&buf, enc)
		}
	})
}

func BenchmarkEncodeResponse(b *testing.B) {
	b.Run("hotpath", func(b *testing.B) {
		var e Encoder
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = e.StartBlock(buf[:0])
			for _, f := range responseFields {
				buf = e.AppendField(buf, f[0], f[1])
			}
		}
	})
	b.Run("xnet", func(b *testing.B) {
		var buf bytes.Buffer
		enc := hpack.NewEncoder(&buf)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			for _, f := range responseFields {
				enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
			}
		}
	})
}

// framesIn returns a request's frames as a client sends them: HEADERS
// then DATA with END_STREAM.
func framesIn() []byte {
	_, block := warmBlock()
	b := AppendHeaders(nil, 1, FlagEndHeaders, Priority{}, block, 0)
	return AppendData(b, 1, FlagEndStream, bytes.Repeat([]byte("x"), 64), 0)
}

func BenchmarkReadFrame(b *testing.B) {
	in := framesIn()
	b.Run("hotpath", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			for p := in; len(p) > 0; {
				_, n, err := ReadFrame(p, DefaultMaxFrameSize)
				if err != nil {
					b.Fatal(err)
				}
				p = p[n:]
			}
		}
	})
	for _, reuse := range []bool{false, true} {
		name := "xnet"
		if reuse {
			name = "xnet-reuse"
		}
		b.Run(name, func(b *testing.B) {
			r := bytes.NewReader(in)
			fr := http2.NewFramer(nil, r)
			if reuse {
				fr.SetReuseFrames()
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				r.Reset(in)
				for range 2 {
					if _, err := fr.ReadFrame(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkRequestHead is the whole head of a request: read the HEADERS
// frame, decode its block, validate the fields.
func BenchmarkRequestHead(b *testing.B) {
	first, second := warmBlock()
	in := AppendHeaders(nil, 1, FlagEndHeaders|FlagEndStream, Priority{}, second, 0)
	var d Decoder
	d.AppendFields(nil, first)
	var v RequestValidator
	var fs []Field
	b.ReportAllocs()
	for b.Loop() {
		f, _, err := ReadFrame(in, DefaultMaxFrameSize)
		if err != nil {
			b.Fatal(err)
		}
		if fs, err = d.AppendFields(fs[:0], f.BlockFragment()); err != nil {
			b.Fatal(err)
		}
		v.Reset(false)
		for i := range fs {
			if err := v.Field(fs[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := v.End(); err != nil {
			b.Fatal(err)
		}
	}
}
