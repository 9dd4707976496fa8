package wire

// Writers: every HTTP/1.1 byte sequence hotpath emits (status lines,
// fields, dates, request lines, chunk framing), appended to a buffer.

import (
	"net/http"
	"strconv"
	"time"
)

// statusLines holds "HTTP/1.1 NNN Text\r\n" for the codes in use, built
// once so writing a status line is one copy.
var statusLines = func() (t [600][]byte) {
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			t[code] = []byte("HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n")
		}
	}
	return t
}()

// AppendStatusLine appends "HTTP/1.1 code Reason\r\n". Codes without a
// registered reason get "status code N" like net/http.
func AppendStatusLine(dst []byte, code int) []byte {
	return AppendStatusLineProto(dst, 1, code)
}

// AppendStatusLineProto appends the status line for a request of version
// HTTP/1.minor: "HTTP/1.0" for HTTP/1.0 requests, as net/http answers them
// (RFC 9110 §6.2 allows either), "HTTP/1.1" otherwise.
func AppendStatusLineProto(dst []byte, minor, code int) []byte {
	if code >= 100 && code < len(statusLines) && statusLines[code] != nil {
		if minor == 0 {
			return append(append(dst, "HTTP/1.0"...), statusLines[code][len("HTTP/1.1"):]...)
		}
		return append(dst, statusLines[code]...)
	}
	if minor == 0 {
		dst = append(dst, "HTTP/1.0 "...)
	} else {
		dst = append(dst, "HTTP/1.1 "...)
	}
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, " status code "...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	return append(dst, '\r', '\n')
}

// AppendHeader appends "name: value\r\n". The caller guarantees that name
// is a token and value has no CR or LF (see [ValidHeaderValue]).
func AppendHeader(dst []byte, name string, value []byte) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':', ' ')
	dst = append(dst, value...)
	return append(dst, '\r', '\n')
}

// HTTPDateLen is the length of an IMF-fixdate ("Mon, 02 Jan 2006 15:04:05 GMT").
const HTTPDateLen = 29

// AppendHTTPDate appends t in IMF-fixdate, the format of the Date header.
func AppendHTTPDate(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, http.TimeFormat)
}

// AppendRequestLine appends "method target HTTP/1.1\r\n". The caller
// guarantees that method is a token and target has no space or control
// byte.
func AppendRequestLine(dst []byte, method, target string) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, target...)
	return append(dst, " HTTP/1.1\r\n"...)
}

// AppendContentLength appends "Content-Length: n\r\n".
func AppendContentLength(dst []byte, n int64) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// AppendChunkHeader appends the size line of a chunk of n bytes
// ("1a\r\n"). Write the data, then [AppendChunkEnd].
func AppendChunkHeader(dst []byte, n int) []byte {
	const hex = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	u := uint64(n)
	for {
		i--
		tmp[i] = hex[u&0xf]
		u >>= 4
		if u == 0 {
			break
		}
	}
	dst = append(dst, tmp[i:]...)
	return append(dst, '\r', '\n')
}

// AppendChunkEnd appends the CRLF that closes chunk data.
func AppendChunkEnd(dst []byte) []byte { return append(dst, '\r', '\n') }

// AppendChunk appends p as one chunk. An empty p appends nothing, since a
// zero-size chunk would end the body.
func AppendChunk(dst, p []byte) []byte {
	if len(p) == 0 {
		return dst
	}
	dst = AppendChunkHeader(dst, len(p))
	dst = append(dst, p...)
	return AppendChunkEnd(dst)
}

// LastChunk ends a chunked body that has no trailers.
const LastChunk = "0\r\n\r\n"
