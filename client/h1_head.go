package client

// The HTTP/1.1 request head: rendered as net/http's transport writes it,
// and reported field by field to httptrace.

import (
	"bytes"
	"net/http"
	"net/http/httptrace"

	"github.com/hotpathhq/hotpath/wire"
)

// appendRequestHead renders the request line and header fields as
// net/http's Transport does: Host, User-Agent (Go-http-client/1.1 unless
// set; omitted when set empty), the framing fields, Accept-Encoding when
// gzip is transparent, then req.Header.
func appendRequestHead(b []byte, req *http.Request, hasBody, chunked, gzip, closeConn bool) []byte {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = appendRequestURI(b, req.URL)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	if req.Host != "" {
		b = append(b, req.Host...)
	} else {
		b = append(b, req.URL.Host...)
	}
	b = append(b, '\r', '\n')
	if ua, ok := req.Header["User-Agent"]; !ok {
		b = append(b, "User-Agent: Go-http-client/1.1\r\n"...)
	} else if len(ua) > 0 && ua[0] != "" {
		b = appendField(b, "User-Agent", ua[0])
	}
	switch {
	case chunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		if len(req.Trailer) > 0 {
			b = append(b, "Trailer: "...)
			first := true
			for k := range req.Trailer {
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, k...)
			}
			b = append(b, '\r', '\n')
		}
	case hasBody:
		b = wire.AppendContentLength(b, req.ContentLength)
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		b = append(b, "Content-Length: 0\r\n"...)
	}
	if closeConn || req.Close {
		if !headerHasToken(req.Header["Connection"], "close") {
			b = append(b, "Connection: close\r\n"...)
		}
	}
	if gzip {
		b = append(b, "Accept-Encoding: gzip\r\n"...)
	}
	for k, vv := range req.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		for _, v := range vv {
			b = appendField(b, k, v)
		}
	}
	return append(b, '\r', '\n')
}

func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ':', ' ')
	b = append(b, wire.TrimOWS(v)...)
	return append(b, '\r', '\n')
}

// traceHead reports each field of the HTTP/1.1 head in b, as written,
// then the head's end.
func traceHead(trace *httptrace.ClientTrace, b []byte) {
	if trace.WroteHeaderField != nil {
		if i := bytes.Index(b, crlf); i >= 0 {
			b = b[i+2:]
		}
		for len(b) > 0 {
			i := bytes.Index(b, crlf)
			if i <= 0 {
				break
			}
			line := b[:i]
			b = b[i+2:]
			if name, value, ok := bytes.Cut(line, []byte(":")); ok {
				trace.WroteHeaderField(string(name), []string{string(bytes.TrimLeft(value, " \t"))})
			}
		}
	}
	if trace.WroteHeaders != nil {
		trace.WroteHeaders()
	}
}

var crlf = []byte("\r\n")
