package wire

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

// ValidHeaderName reports whether name is a non-empty token.
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !tokenByte[name[i]] {
			return false
		}
	}
	return true
}

// ValidHeaderValue reports whether v may be sent as a field value: no
// control bytes other than HTAB (so no CR or LF to split the response).
func ValidHeaderValue[T string | []byte](v T) bool {
	return indexCtlInValue(v) < 0
}

// HTTPDateLen is the length of an IMF-fixdate ("Mon, 02 Jan 2006 15:04:05 GMT").
const HTTPDateLen = 29

// AppendHTTPDate appends t in IMF-fixdate, the format of the Date header.
func AppendHTTPDate(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, http.TimeFormat)
}

// BodyAllowed reports whether a response with this status may carry a body
// (RFC 9110: 1xx, 204 and 304 may not).
func BodyAllowed(status int) bool {
	return !(status >= 100 && status < 200) && status != 204 && status != 304
}
