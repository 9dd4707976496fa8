package client

// An outgoing request as both engines check and send it: what may not
// leave (validateRequest) and its target (appendRequestURI).

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"

	"github.com/hotpathhq/hotpath/wire"
)

// validateRequest refuses what would let a caller's data change the
// message's shape: bad methods, header field names and values, trailer
// keys, and a Host or request target carrying control bytes or spaces
// (net/http drops the rest of such a Host; refusing is clearer than
// sending a host the caller did not write).
func validateRequest(req *http.Request) error {
	if req.Method != "" && !wire.ValidHeaderName(req.Method) {
		return fmt.Errorf("net/http: invalid method %q", req.Method)
	}
	if badURIBytes(req.Host) || badURIBytes(req.URL.Host) {
		host := req.Host
		if host == "" || !badURIBytes(host) {
			host = req.URL.Host
		}
		return fmt.Errorf("client: invalid Host %q", host)
	}
	if badURIBytes(req.URL.RawQuery) || badURIBytes(req.URL.RawPath) || badURIBytes(req.URL.Opaque) {
		return errors.New("net/http: can't write control character in Request.URL")
	}
	for k, vv := range req.Trailer {
		switch textproto.CanonicalMIMEHeaderKey(k) {
		case "Transfer-Encoding", "Trailer", "Content-Length":
			return fmt.Errorf("client: invalid Trailer key %q", k)
		}
		if !wire.ValidHeaderName(k) {
			return fmt.Errorf("net/http: invalid trailer field name %q", k)
		}
		for _, v := range vv {
			if !wire.ValidHeaderValue(v) {
				return fmt.Errorf("net/http: invalid trailer field value for %q", k)
			}
		}
	}
	for k, vv := range req.Header {
		if !wire.ValidHeaderName(k) {
			return fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vv {
			if !wire.ValidHeaderValue(v) {
				return fmt.Errorf("net/http: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// badURIBytes reports a control byte, space or DEL in s.
func badURIBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// appendRequestURI appends u's path and query as net/url's RequestURI
// would, without allocating when the path needs no escaping.
func appendRequestURI(b []byte, uu *url.URL) []byte {
	if uu.Opaque != "" {
		return append(b, uu.RequestURI()...)
	}
	switch {
	case uu.RawPath == "" && pathIsClean(uu.Path):
		if uu.Path == "" {
			b = append(b, '/')
		} else {
			b = append(b, uu.Path...)
		}
	default:
		p := uu.EscapedPath()
		if p == "" {
			p = "/"
		}
		b = append(b, p...)
	}
	if uu.ForceQuery || uu.RawQuery != "" {
		b = append(b, '?')
		b = append(b, uu.RawQuery...)
	}
	return b
}

// pathIsClean reports whether p is sent as is: no byte net/url would
// escape in a path.
func pathIsClean(p string) bool {
	for i := 0; i < len(p); i++ {
		if !pathByte[p[i]] {
			return false
		}
	}
	return true
}

// pathByte marks the bytes net/url leaves unescaped in a path.
var pathByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~/!$&'()*+,;=:@" {
		t[c] = true
	}
	return t
}()

// closeRequestBody closes req's body, as a RoundTripper must, even on error.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
