package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// The response most end-to-end experiments use: the GUIDE's "Hello,
// World!" with Date, Content-Type and Content-Length.
var hello = []byte("Hello, World!")

func helloHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(hello)
}

func helloNative(c *server.Ctx) {
	c.SetContentType("text/plain; charset=utf-8")
	c.Write(hello)
}

// netHTTP serves h with net/http; configure may set timeouts.
func netHTTP(h http.Handler, configure func(*http.Server)) serverSpec {
	return func(ln net.Listener) (*x509.Certificate, func(), error) {
		srv := &http.Server{Handler: h, ErrorLog: discardLog}
		if configure != nil {
			configure(srv)
		}
		go srv.Serve(ln)
		return nil, func() { shutdown(srv.Shutdown, srv.Close) }, nil
	}
}

// netHTTPTLS serves h with net/http over TLS, HTTP/2 enabled, with
// httptest's localhost certificate.
func netHTTPTLS(h http.Handler) serverSpec {
	return func(ln net.Listener) (*x509.Certificate, func(), error) {
		ts := httptest.NewUnstartedServer(h)
		ts.Listener.Close()
		ts.Listener = ln
		ts.EnableHTTP2 = true
		ts.Config.ErrorLog = discardLog
		ts.StartTLS()
		return ts.Certificate(), ts.Close, nil
	}
}

// hotpathServer serves with hotpath's engine as configured by srv.
func hotpathServer(mk func() *server.Server) serverSpec {
	return func(ln net.Listener) (*x509.Certificate, func(), error) {
		srv := mk()
		srv.ErrorLog = discardLog
		go srv.Serve(ln)
		return nil, func() { shutdown(srv.Shutdown, srv.Close) }, nil
	}
}

// hotpathTLS serves with hotpath's engine over TLS (ServeTLS: ALPN h2
// and http/1.1 when the server has a Handler) as configured by mk, with
// the same httptest localhost certificate as netHTTPTLS, so that the
// handshake costs the same whichever engine serves.
func hotpathTLS(mk func() *server.Server) serverSpec {
	return func(ln net.Listener) (*x509.Certificate, func(), error) {
		cert, err := httptestCert()
		if err != nil {
			return nil, nil, err
		}
		srv := mk()
		srv.ErrorLog = discardLog
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		go srv.ServeTLS(ln, "", "")
		return cert.Leaf, func() { shutdown(srv.Shutdown, srv.Close) }, nil
	}
}

// httptestCert is httptest's localhost certificate (valid for
// example.com and 127.0.0.1, as trust expects), its leaf parsed.
// httptest keeps it in an internal package: a TLS test server started
// and closed at once hands it over.
var httptestCert = sync.OnceValues(func() (tls.Certificate, error) {
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.StartTLS()
	defer ts.Close()
	if len(ts.TLS.Certificates) == 0 {
		return tls.Certificate{}, errors.New("lab: httptest's TLS server has no certificate")
	}
	cert := ts.TLS.Certificates[0]
	cert.Leaf = ts.Certificate()
	return cert, nil
})

func shutdown(graceful func(context.Context) error, hard func() error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if graceful(ctx) != nil {
		hard()
	}
}
