package wire

import (
	"bytes"
	"io"
)

// Chunked transfer coding (RFC 9112 §7.1).

const (
	// MaxChunkLineBytes caps a chunk-size line, extensions and CRLF
	// included: the longest line net/http reads through its 4 KiB buffer.
	MaxChunkLineBytes = 4096
	// maxChunkOverhead caps framing bytes (size lines, extensions, CRLFs)
	// beyond a fair share per chunk, as net/http does against a sender that
	// trickles one-byte chunks with long extensions.
	maxChunkOverhead = 16 << 10
)

type chunkState uint8

const (
	chunkSize    chunkState = iota // expecting a chunk-size line
	chunkData                      // inside chunk data, left bytes to go
	chunkDataEnd                   // expecting the CRLF after chunk data
	chunkTrailer                   // inside the trailer section
	chunkDone                      // last chunk and trailers consumed
)

// ChunkedDecoder decodes a chunked body from byte slices without copying.
// Reuse one per connection: call Reset before each body.
type ChunkedDecoder struct {
	// MaxTrailerBytes caps the trailer section; 0 means DefaultMaxTrailerBytes.
	MaxTrailerBytes int
	// MaxTrailers caps the number of trailer fields, as Limits.MaxHeaders
	// caps header fields; more is ErrTooManyTrailers. 0 means no cap but
	// MaxTrailerBytes.
	MaxTrailers int
	// OnTrailer, if set, receives each trailer field once it is validated.
	// name and value alias the input and are valid only during the call.
	OnTrailer func(name, value []byte)

	state        chunkState
	left         uint64
	overhead     int64
	trailerBytes int
	trailers     int
}

// Reset prepares d for a new body.
func (d *ChunkedDecoder) Reset() {
	d.state, d.left, d.overhead, d.trailerBytes, d.trailers = chunkSize, 0, 0, 0, 0
}

// Done reports whether the whole body, trailers included, was consumed.
func (d *ChunkedDecoder) Done() bool { return d.state == chunkDone }

// DataLeft is how many bytes of the current chunk's data are still to
// come when the decoder is inside a chunk's data (0 between chunks). A
// reader may take up to that many straight from its source, without
// passing them through Decode, and report them with SkipData.
func (d *ChunkedDecoder) DataLeft() uint64 {
	if d.state != chunkData {
		return 0
	}
	return d.left
}

// SkipData records k bytes of chunk data that the caller read itself;
// k must not exceed DataLeft.
func (d *ChunkedDecoder) SkipData(k uint64) {
	if d.state != chunkData || k > d.left {
		panic("wire: ChunkedDecoder.SkipData past the chunk's data")
	}
	d.left -= k
	if d.left == 0 {
		d.state = chunkDataEnd
	}
}

// Decode consumes chunked framing from the front of src and returns the
// next piece of body data, a sub-slice of src. n is how many bytes of src
// were consumed, data included. err is:
//   - nil: data holds body bytes (possibly none); call again with src[n:];
//   - [ErrNeedMore]: src[n:] is an incomplete frame; call again with it
//     followed by more input;
//   - io.EOF: the last chunk and trailer section are consumed (n counts
//     them); bytes after src[n] belong to the next message;
//   - an [*Error]: the body is malformed; answer with its status and close.
//
// Trailer fields are validated like header fields and then dropped.
func (d *ChunkedDecoder) Decode(src []byte) (data []byte, n int, err error) {
	for {
		switch d.state {
		case chunkSize:
			line, next, err := chunkLine(src[n:])
			if err != nil {
				return nil, n, err
			}
			size, err := parseChunkSize(line)
			if err != nil {
				return nil, n, err
			}
			n += next
			d.overhead += int64(next) + 2 - 16
			if d.overhead > maxChunkOverhead {
				return nil, n, ErrChunkOverhead
			}
			if size == 0 {
				d.state = chunkTrailer
				continue
			}
			d.overhead -= int64(min(size, 1<<20) * 2)
			d.overhead = max(d.overhead, 0)
			d.state, d.left = chunkData, size
		case chunkData:
			avail := src[n:]
			if len(avail) == 0 {
				return nil, n, ErrNeedMore
			}
			if uint64(len(avail)) > d.left {
				avail = avail[:d.left]
			}
			d.left -= uint64(len(avail))
			if d.left == 0 {
				d.state = chunkDataEnd
			}
			return avail, n + len(avail), nil
		case chunkDataEnd:
			rest := src[n:]
			if len(rest) < 2 {
				if len(rest) == 1 && rest[0] != '\r' {
					return nil, n, ErrBadChunkTerminator
				}
				return nil, n, ErrNeedMore
			}
			if rest[0] != '\r' || rest[1] != '\n' {
				return nil, n, ErrBadChunkTerminator
			}
			n += 2
			d.state = chunkSize
		case chunkTrailer:
			max := d.MaxTrailerBytes
			if max <= 0 {
				max = DefaultMaxTrailerBytes
			}
			line, next, err := readLine(src, n, max-d.trailerBytes, ErrTrailerTooLarge)
			if err != nil {
				return nil, n, err
			}
			if next-n == len(line)+1 { // ended by a bare LF
				return nil, n, ErrChunkBareLF
			}
			d.trailerBytes += next - n
			n = next
			if len(line) == 0 {
				d.state = chunkDone
				return nil, n, io.EOF
			}
			name, value, err := splitTrailerField(line)
			if err != nil {
				return nil, n, err
			}
			if d.trailers++; d.MaxTrailers > 0 && d.trailers > d.MaxTrailers {
				return nil, n, ErrTooManyTrailers
			}
			if d.OnTrailer != nil {
				d.OnTrailer(name, value)
			}
		case chunkDone:
			return nil, n, io.EOF
		}
	}
}

// chunkLine returns a chunk-size line without its CRLF, and the length
// consumed. Bare LF and stray CR are errors, as in net/http. A CR followed
// by anything but LF is reported as soon as it is seen, so that the error
// does not depend on how the input was split into reads.
func chunkLine(src []byte) (line []byte, n int, err error) {
	window := src
	if len(window) > MaxChunkLineBytes {
		window = window[:MaxChunkLineBytes]
	}
	nl := bytes.IndexByte(window, '\n')
	end := nl
	if nl < 0 {
		end = len(window)
	}
	if cr := bytes.IndexByte(window[:end], '\r'); cr >= 0 && cr != end-1 {
		return nil, 0, ErrBadChunkSize
	}
	if nl < 0 {
		if len(window) == MaxChunkLineBytes {
			return nil, 0, ErrChunkLineTooLong
		}
		return nil, 0, ErrNeedMore
	}
	if nl == 0 || window[nl-1] != '\r' {
		return nil, 0, ErrChunkBareLF
	}
	return window[:nl-1], nl + 1, nil
}

// parseChunkSize reads 1*HEXDIG, then optional extensions:
// *( BWS ";" BWS ext-name [ BWS "=" BWS ext-value ] ). Extensions are
// ignored but may not carry control bytes. No whitespace may follow the
// size: net/http rejects "5 ;ext" and accepts "5 ", this rejects both.
func parseChunkSize(line []byte) (uint64, error) {
	var n uint64
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			goto ext
		}
		if i == 16 {
			return 0, ErrBadChunkSize
		}
		n = n<<4 | uint64(v)
	}
ext:
	if i == 0 {
		return 0, ErrBadChunkSize
	}
	rest := line[i:]
	if len(rest) == 0 {
		return n, nil
	}
	if rest[0] != ';' {
		return 0, ErrBadChunkSize
	}
	for _, c := range rest {
		if ctlInValue(c) {
			return 0, ErrBadChunkSize
		}
	}
	return n, nil
}

// splitTrailerField validates one trailer line like a header field and
// returns its name and value (without surrounding whitespace).
func splitTrailerField(line []byte) (name, value []byte, err error) {
	if isOWS(line[0]) {
		return nil, nil, ErrBadTrailer
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return nil, nil, ErrBadTrailer
	}
	name, value = line[:colon], TrimOWS(line[colon+1:])
	for _, c := range name {
		if !tokenByte[c] {
			return nil, nil, ErrBadTrailer
		}
	}
	if indexCtlInValue(value) >= 0 {
		return nil, nil, ErrBadTrailer
	}
	return name, value, nil
}
