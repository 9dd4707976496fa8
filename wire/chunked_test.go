package wire_test

import (
	"bytes"
	"io"
	"net/http/httputil"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire"
)

// TestChunkedPipelined decodes a body followed by the next message: Decode
// stops at the end of the trailer section and keeps reporting io.EOF.
func TestChunkedPipelined(t *testing.T) {
	const next = "GET /next HTTP/1.1\r\n"
	src := []byte("5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n" + next)
	var d wire.ChunkedDecoder
	body, used, err := decodeStream(&d, [][]byte{src})
	if err != io.EOF || string(body) != "hello" || string(src[used:]) != next {
		t.Fatalf("got %q, %v; rest %q", body, err, src[used:])
	}
	data, n, err := d.Decode(src[used:])
	if data != nil || n != 0 || err != io.EOF {
		t.Fatalf("Decode after the end = %q, %d, %v; want nil, 0, io.EOF", data, n, err)
	}
}

func TestChunkedReset(t *testing.T) {
	var d wire.ChunkedDecoder
	if _, _, err := decodeStream(&d, [][]byte{[]byte("3\r\nab")}); err != wire.ErrNeedMore {
		t.Fatal(err)
	}
	d.Reset()
	body, _, err := decodeStream(&d, [][]byte{[]byte("2\r\nok\r\n0\r\n\r\n")})
	if err != io.EOF || string(body) != "ok" || !d.Done() {
		t.Fatalf("after Reset: %q, %v", body, err)
	}
	d.Reset()
	if d.Done() {
		t.Fatal("Done after Reset")
	}
}

func TestChunkedMaxTrailerBytes(t *testing.T) {
	field := "X-Long: " + strings.Repeat("v", 90) + "\r\n" // 100 bytes
	for _, tt := range []struct {
		fields int
		want   error
	}{{1, io.EOF}, {2, wire.ErrTrailerTooLarge}} {
		d := wire.ChunkedDecoder{MaxTrailerBytes: 102} // one field and the empty line
		src := "0\r\n" + strings.Repeat(field, tt.fields) + "\r\n"
		if _, _, err := decodeStream(&d, [][]byte{[]byte(src)}); err != tt.want {
			t.Errorf("%d fields: %v, want %v", tt.fields, err, tt.want)
		}
	}
}

// TestChunkLineLimit checks the chunk-line cap at its edge, complete and
// arriving unterminated.
func TestChunkLineLimit(t *testing.T) {
	ext := func(lineLen int) string { return "1;" + strings.Repeat("e", lineLen-2) }
	for _, tt := range []struct {
		src  string
		want error
	}{
		{ext(wire.MaxChunkLineBytes-2) + "\r\nx\r\n0\r\n\r\n", io.EOF},
		{ext(wire.MaxChunkLineBytes-1) + "\r\nx\r\n0\r\n\r\n", wire.ErrChunkLineTooLong},
		{ext(wire.MaxChunkLineBytes - 1), wire.ErrNeedMore},
		{ext(wire.MaxChunkLineBytes), wire.ErrChunkLineTooLong},
	} {
		var d wire.ChunkedDecoder
		if _, _, err := decodeStream(&d, [][]byte{[]byte(tt.src)}); err != tt.want {
			t.Errorf("line of %d bytes: %v, want %v", strings.IndexByte(tt.src+"\n", '\n'), err, tt.want)
		}
	}
}

// TestAppendChunkRoundTrip encodes with the Append helpers and decodes
// with wire and with net/http.
func TestAppendChunkRoundTrip(t *testing.T) {
	parts := []string{"a", "", strings.Repeat("b", 15), strings.Repeat("c", 16), strings.Repeat("d", 4097)}
	var enc []byte
	for _, p := range parts {
		enc = wire.AppendChunk(enc, []byte(p))
	}
	enc = append(enc, wire.LastChunk...)
	want := strings.Join(parts, "")
	var d wire.ChunkedDecoder
	body, used, err := decodeStream(&d, bytewise(enc))
	if err != io.EOF || string(body) != want || used != len(enc) {
		t.Fatalf("wire: %v after %d of %d bytes", err, used, len(enc))
	}
	nb, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(enc)))
	if err != nil || string(nb) != want {
		t.Fatalf("net/http: %v", err)
	}
	if got := string(wire.AppendChunkHeader(nil, 0x1a2b)); got != "1a2b\r\n" {
		t.Errorf("AppendChunkHeader = %q", got)
	}
}

func TestChunkedDecodeAllocs(t *testing.T) {
	src := chunkedBody(16, 1024)
	var d wire.ChunkedDecoder
	allocs := testing.AllocsPerRun(100, func() {
		if err := decodeAll(&d, src); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times per body, want 0", allocs)
	}
}

// decodeAll resets d and decodes the whole body in src, discarding the data.
func decodeAll(d *wire.ChunkedDecoder, src []byte) error {
	d.Reset()
	for {
		_, n, err := d.Decode(src)
		src = src[n:]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// chunkedBody is n chunks of size bytes each, then the last chunk.
func chunkedBody(n, size int) []byte {
	var b []byte
	chunk := bytes.Repeat([]byte("x"), size)
	for range n {
		b = wire.AppendChunk(b, chunk)
	}
	return append(b, wire.LastChunk...)
}

func BenchmarkChunkedDecode(b *testing.B) {
	for _, bc := range []struct {
		name    string
		n, size int
	}{{"16x1KiB", 16, 1024}, {"256x16B", 256, 16}, {"1x64KiB", 1, 64 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			src := chunkedBody(bc.n, bc.size)
			var d wire.ChunkedDecoder
			b.SetBytes(int64(bc.n * bc.size))
			b.ReportAllocs()
			for b.Loop() {
				if err := decodeAll(&d, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestChunkedSkipData: data taken around the decoder (DataLeft, SkipData)
// leaves it where Decode would have: the chunk's CRLF, the next chunk and
// the end are still checked.
func TestChunkedSkipData(t *testing.T) {
	in := []byte("a\r\n0123456789\r\n3\r\nabc\r\n0\r\n\r\nNEXT")
	var d wire.ChunkedDecoder
	data, n, err := d.Decode(in[:5]) // the size line and 2 bytes of data
	if err != nil || string(data) != "01" || d.DataLeft() != 8 {
		t.Fatalf("Decode: %q %d %v, DataLeft %d", data, n, err, d.DataLeft())
	}
	d.SkipData(8) // the caller read "23456789" itself
	if d.DataLeft() != 0 {
		t.Fatalf("DataLeft after skipping the rest: %d", d.DataLeft())
	}
	rest := in[13:]
	var got []byte
	for {
		data, n, err := d.Decode(rest)
		got = append(got, data...)
		rest = rest[n:]
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "abc" || string(rest) != "NEXT" {
		t.Fatalf("after SkipData: body %q, rest %q", got, rest)
	}

	d.Reset()
	d.Decode([]byte("4\r\nab"))
	d.SkipData(2)
	if _, _, err := d.Decode([]byte("XY")); err != wire.ErrBadChunkTerminator {
		t.Fatalf("a bad terminator after skipped data: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("SkipData past the chunk did not panic")
		}
	}()
	d.Reset()
	d.Decode([]byte("4\r\nab"))
	d.SkipData(3)
}
