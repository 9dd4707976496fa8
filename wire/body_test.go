package wire_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hotpathhq/hotpath/wire"
)

// decodeBody runs d over msg fed in pieces of at most step bytes; with
// direct, body bytes DataLeft announces are taken straight from the input
// (as a reader filling its own buffer would) and reported with SkipData.
// It returns the body, how many bytes of msg the body took, and the
// decoder's verdict (nil, an *wire.Error, or io.ErrUnexpectedEOF when the
// input ended first).
func decodeBody(framing wire.Framing, cl int64, msg []byte, step int, direct bool) (body []byte, used int, err error) {
	var d wire.BodyDecoder
	d.Reset(framing, cl)
	var buf []byte // fed and not yet consumed
	in := msg
	for {
		if direct && len(buf) == 0 && len(in) > 0 {
			if k := min(d.DataLeft(), int64(len(in)), int64(step)); k > 0 {
				body = append(body, in[:k]...)
				in = in[k:]
				used += int(k)
				d.SkipData(k)
				if d.Done() {
					return body, used, nil
				}
				continue
			}
		}
		data, n, derr := d.Decode(buf)
		body = append(body, data...)
		buf = buf[n:]
		used += n
		switch {
		case derr == io.EOF:
			return body, used, nil
		case derr == wire.ErrNeedMore:
			if len(in) == 0 {
				return body, used, d.EOF()
			}
			k := min(step, len(in))
			buf = append(buf, in[:k]...)
			in = in[k:]
		case derr != nil:
			return body, used, derr
		}
	}
}

func TestBodyDecoder(t *testing.T) {
	cases := []struct {
		name    string
		framing wire.Framing
		cl      int64
		msg     string
		body    string
		used    int
		err     error
	}{
		{"no body", wire.NoBody, 0, "HTTP/1.1 200 OK\r\n", "", 0, nil},
		{"length", wire.LengthBody, 5, "hello", "hello", 5, nil},
		{"length, next message after it", wire.LengthBody, 5, "helloHTTP/1.1", "hello", 5, nil},
		{"length zero", wire.LengthBody, 0, "next", "", 0, nil},
		{"length cut short", wire.LengthBody, 10, "hello", "hello", 5, io.ErrUnexpectedEOF},
		{"chunked", wire.ChunkedBody, 0, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nnext", "hello world", 26, nil},
		{"chunked with trailer", wire.ChunkedBody, 0, "3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", "abc", 21, nil},
		{"chunked cut short", wire.ChunkedBody, 0, "5\r\nhel", "hel", 6, io.ErrUnexpectedEOF},
		{"chunked malformed", wire.ChunkedBody, 0, "zz\r\nhello\r\n", "", 0, wire.ErrBadChunkSize},
		{"until close", wire.CloseBody, 0, "all of it\r\n0\r\n", "all of it\r\n0\r\n", 14, nil},
		{"until close, empty", wire.CloseBody, 0, "", "", 0, nil},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 2, 3, 7, 1 << 20} {
			for _, direct := range []bool{false, true} {
				body, used, err := decodeBody(tc.framing, tc.cl, []byte(tc.msg), step, direct)
				if string(body) != tc.body || used != tc.used || !errors.Is(err, tc.err) {
					t.Errorf("%s (step %d, direct %v): body %q used %d err %v; want %q %d %v", tc.name, step, direct, body, used, err, tc.body, tc.used, tc.err)
				}
			}
		}
	}
}

// TestBodyDecoderTrailers: the chunked decoder's settings survive Reset,
// and trailers reach OnTrailer.
func TestBodyDecoderTrailers(t *testing.T) {
	var d wire.BodyDecoder
	var got []string
	d.Chunked.OnTrailer = func(name, value []byte) { got = append(got, string(name)+"="+string(value)) }
	for range 2 {
		got = got[:0]
		d.Reset(wire.ChunkedBody, 0)
		src := []byte("0\r\nX-Sum: 42\r\n\r\n")
		_, n, err := d.Decode(src)
		if err != io.EOF || n != len(src) || len(got) != 1 || got[0] != "X-Sum=42" || !d.Done() {
			t.Fatalf("n %d err %v trailers %v done %v", n, err, got, d.Done())
		}
	}
}

// FuzzBodyDecoder: for any framing, length and input, the body, the bytes
// it takes and the verdict do not depend on how the input is split, nor
// on whether body bytes pass through Decode or are taken directly
// (DataLeft and SkipData); the body is never longer than the input, and a
// length-delimited one never longer than its length.
func FuzzBodyDecoder(f *testing.F) {
	f.Add(uint8(wire.LengthBody), int64(5), []byte("helloworld"), uint8(3))
	f.Add(uint8(wire.ChunkedBody), int64(0), []byte("5\r\nhello\r\n0\r\nA: b\r\n\r\nrest"), uint8(1))
	f.Add(uint8(wire.ChunkedBody), int64(0), []byte("ffffffffffffffff\r\nx"), uint8(2))
	f.Add(uint8(wire.ChunkedBody), int64(0), []byte("1;ext=1\r\na\r\n0\r\n\r\n"), uint8(4))
	f.Add(uint8(wire.CloseBody), int64(0), []byte("anything\r\n\r\n"), uint8(5))
	f.Add(uint8(wire.NoBody), int64(0), []byte("x"), uint8(1))
	f.Add(uint8(wire.LengthBody), int64(-1), []byte(""), uint8(1))
	f.Fuzz(func(t *testing.T, framing uint8, cl int64, msg []byte, step uint8) {
		fr := wire.Framing(framing % 4)
		if cl > 1<<20 {
			cl = 1 << 20
		}
		wantBody, wantUsed, wantErr := decodeBody(fr, cl, msg, len(msg)+1, false)
		if wantUsed > len(msg) || len(wantBody) > len(msg) || (fr == wire.LengthBody && int64(len(wantBody)) > max(cl, 0)) {
			t.Fatalf("body %d bytes, used %d, of %d (length %d)", len(wantBody), wantUsed, len(msg), cl)
		}
		var we *wire.Error
		if wantErr != nil && wantErr != io.ErrUnexpectedEOF && !errors.As(wantErr, &we) {
			t.Fatalf("verdict %v: neither a *wire.Error nor an unexpected EOF", wantErr)
		}
		s := int(step%16) + 1
		for _, direct := range []bool{false, true} {
			body, used, err := decodeBody(fr, cl, msg, s, direct)
			if !bytes.Equal(body, wantBody) || used != wantUsed || !sameVerdict(err, wantErr) {
				t.Fatalf("step %d direct %v: body %q used %d err %v; whole: %q %d %v", s, direct, body, used, err, wantBody, wantUsed, wantErr)
			}
		}
	})
}

// sameVerdict: both nil, or both the same error value.
func sameVerdict(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return errors.Is(a, b) || a.Error() == b.Error()
}
