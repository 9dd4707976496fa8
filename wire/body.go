package wire

import (
	"io"
	"math"
)

// BodyDecoder decodes an HTTP/1.1 message body of any framing (see
// [Framing]) from byte slices as they arrive: no socket, no copy, no
// allocation. It is the one body reader of hotpath's client and load
// generator. Reuse one per connection: call Reset with each message's
// framing.
//
// A reader either passes its input through Decode, or, when DataLeft says
// body bytes are due next, reads up to that many straight into its own
// buffer and reports them with SkipData (a big body then never passes
// through the connection's buffer). When its source ends, it calls EOF,
// which ends a close-delimited body and reports any other cut short.
type BodyDecoder struct {
	// Chunked decodes chunked bodies; set its OnTrailer, MaxTrailerBytes
	// and MaxTrailers as needed (Reset keeps them).
	Chunked ChunkedDecoder

	framing Framing
	left    int64 // LengthBody: bytes to go
	done    bool
}

// Reset prepares d for a body of the given framing; contentLength is the
// message's Content-Length, used with LengthBody only.
func (d *BodyDecoder) Reset(framing Framing, contentLength int64) {
	d.framing, d.left, d.done = framing, 0, false
	switch framing {
	case NoBody:
		d.done = true
	case LengthBody:
		d.left = max(contentLength, 0)
		d.done = d.left == 0
	case ChunkedBody:
		d.Chunked.Reset()
	}
}

// Framing returns the framing d was reset with.
func (d *BodyDecoder) Framing() Framing { return d.framing }

// Decode consumes body framing and data from the front of src and returns
// the next piece of body data, a sub-slice of src; n is how many bytes of
// src were consumed, data included. err is:
//   - nil: data holds body bytes (possibly none); call again with src[n:];
//   - [ErrNeedMore]: src[n:] is consumed or an incomplete frame; call
//     again with it followed by more input;
//   - io.EOF: the body ended at src[n] (data may hold its last bytes);
//     bytes after it belong to the next message;
//   - an [*Error]: the body is malformed (chunked framing).
//
// A close-delimited body never ends in Decode: it ends when its source
// does (see EOF).
func (d *BodyDecoder) Decode(src []byte) (data []byte, n int, err error) {
	if d.done {
		return nil, 0, io.EOF
	}
	switch d.framing {
	case LengthBody:
		take := min(int64(len(src)), d.left)
		if take == 0 {
			return nil, 0, ErrNeedMore
		}
		d.left -= take
		if d.left == 0 {
			d.done = true
			return src[:take], int(take), io.EOF
		}
		return src[:take], int(take), nil
	case ChunkedBody:
		data, n, err = d.Chunked.Decode(src)
		if err == io.EOF {
			d.done = true
		}
		return data, n, err
	case CloseBody:
		if len(src) == 0 {
			return nil, 0, ErrNeedMore
		}
		return src, len(src), nil
	}
	return nil, 0, io.EOF
}

// DataLeft is how many body bytes come next in the input, before any
// framing: a reader may read up to that many straight from its source and
// report them with SkipData. It is 0 between chunks and at the end, and
// math.MaxInt64 for a close-delimited body.
func (d *BodyDecoder) DataLeft() int64 {
	if d.done {
		return 0
	}
	switch d.framing {
	case LengthBody:
		return d.left
	case ChunkedBody:
		return int64(min(d.Chunked.DataLeft(), math.MaxInt64))
	case CloseBody:
		return math.MaxInt64
	}
	return 0
}

// SkipData records k body bytes the reader took from its source itself;
// k must not exceed DataLeft. A length-delimited body ends with its last
// byte (Done reports it).
func (d *BodyDecoder) SkipData(k int64) {
	switch d.framing {
	case LengthBody:
		d.left -= min(k, d.left)
		d.done = d.left == 0
	case ChunkedBody:
		d.Chunked.SkipData(uint64(k))
	}
}

// Done reports whether the whole body was consumed.
func (d *BodyDecoder) Done() bool { return d.done }

// EOF reports what the end of the input means for the body: nil when the
// body was complete or is close-delimited (which ends it there), and
// io.ErrUnexpectedEOF when it was cut short.
func (d *BodyDecoder) EOF() error {
	if d.done {
		return nil
	}
	if d.framing == CloseBody {
		d.done = true
		return nil
	}
	return io.ErrUnexpectedEOF
}
