package client

// httptrace on the Transport's own path: the hooks net/http's transport
// calls, at the same moments and in the same order, so that tracing
// instrumentation (OpenTelemetry's otelhttptrace, APM agents) sees the
// same spans on either transport. A request whose context carries no
// ClientTrace pays one nil check at each point.
//
// Order, as net/http's: GetConn; the dial's DNSStart, DNSDone,
// ConnectStart, ConnectDone (net.Dialer calls them from the context);
// TLSHandshakeStart, TLSHandshakeDone; GotConn; WroteHeaderField for each
// field and WroteHeaders; Wait100Continue; WroteRequest;
// GotFirstResponseByte; Got100Continue and Got1xxResponse; PutIdleConn
// when an HTTP/1.1 connection goes back to the pool.

import (
	"net/http/httptrace"
	"net/textproto"

	"github.com/hotpathhq/hotpath/wire"
)

// traceWroteRequest reports the request written, or how writing it
// failed.
func traceWroteRequest(trace *httptrace.ClientTrace, err error) {
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	}
}

// trace1xx reports an interim response: 100 Continue to a request that
// waits for it as Got100Continue, any other 1xx but 101 as
// Got1xxResponse, whose error ends the request.
func trace1xx(trace *httptrace.ClientTrace, code int, fields []wire.Header, waiting bool) error {
	if code == 100 && waiting && trace.Got100Continue != nil {
		trace.Got100Continue()
	}
	if trace.Got1xxResponse == nil {
		return nil
	}
	h := make(textproto.MIMEHeader, len(fields))
	for _, f := range fields {
		k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		h[k] = append(h[k], string(f.Value))
	}
	return trace.Got1xxResponse(code, h)
}
