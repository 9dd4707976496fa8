package server

import (
	"bytes"
	"crypto/tls"
	"net"
	"slices"
)

// TLS: ListenAndServeTLS, ServeTLS and the configuration they serve with;
// which engine a connection goes to is chosen in dispatch.go (afterTLS).
//
// HTTP/1.1 over TLS runs on hotpath's engine like plain HTTP/1.1 (without
// the buffer-less idle wait, which needs the raw socket). A connection that
// negotiates "h2" through ALPN is served, after the handshake, on the
// connection's goroutine by hotpath's own HTTP/2 connection (h2_conn.go);
// or, with Server.HTTP2HandOff, handed to a net/http server running the
// same Handler, whose bundled HTTP/2 implementation serves it (a Native
// server then offers http/1.1 alone; see handoff.go).

// ListenAndServeTLS listens on s.Addr (":https" if empty) and serves TLS
// with the certificate and key in the given files (or s.TLSConfig's
// certificates when both are empty).
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	if s.shutting.Load() {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = ":https"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeTLS(ln, certFile, keyFile)
}

// ServeTLS is Serve over TLS. Connections negotiating HTTP/2 are served by
// net/http's HTTP/2 server with s.Handler.
func (s *Server) ServeTLS(ln net.Listener, certFile, keyFile string) error {
	cfg := &tls.Config{}
	if s.TLSConfig != nil {
		cfg = s.TLSConfig.Clone()
	}
	// As net/http: the files are read when given, or when nothing in
	// the configuration can supply a certificate (GetConfigForClient's
	// configurations can).
	if certFile != "" || keyFile != "" || len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			ln.Close()
			return err
		}
		cfg.Certificates = append(cfg.Certificates, cert)
	}
	s.resolve()
	if len(cfg.NextProtos) == 0 {
		if s.cfg.h2TLS && (s.Native == nil || s.ownH2()) {
			cfg.NextProtos = append(cfg.NextProtos, "h2")
		}
		if s.cfg.http1 {
			cfg.NextProtos = append(cfg.NextProtos, "http/1.1")
		}
		for proto := range s.TLSNextProto {
			if proto != "h2" && !slices.Contains(cfg.NextProtos, proto) {
				cfg.NextProtos = append(cfg.NextProtos, proto)
			}
		}
	}
	s.mu.Lock()
	s.tlsConfig = cfg
	s.mu.Unlock()
	return s.Serve(ln)
}

// looksLikeHTTP reports whether the first bytes of a would-be TLS record
// are an HTTP/1.x request's.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// h2cPreface starts every cleartext HTTP/2 connection (RFC 9113 §3.4).
const h2cPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// notHTTP1 reports whether buffered bytes hold a first line that is not
// an HTTP/1.x request line: its last word is not an HTTP version. On an
// h2c listener such a client may be an HTTP/2 client with a broken
// preface, which must see a connection error (RFC 9113 §3.4), not an
// HTTP/1.1 response it would read as a frame.
func notHTTP1(got []byte) bool {
	i := bytes.IndexByte(got, '\n')
	if i < 0 {
		return false // not a whole line yet: the HTTP/1.1 parser decides
	}
	line := bytes.TrimRight(got[:i], "\r")
	return !bytes.HasPrefix(line[bytes.LastIndexByte(line, ' ')+1:], []byte("HTTP/"))
}

// replayConn is a net.Conn whose first reads return bytes the engine
// already took off the socket.
type replayConn struct {
	net.Conn
	pending []byte
}

func (r *replayConn) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return r.Conn.Read(p)
}

// closeAfterFailedWrite closes a connection whose write to the client
// failed (both engines). Over TLS, crypto/tls's Close would first send a
// close_notify alert: to a client that stopped reading, it waits up to
// 5 s for the write; to one still reading, it lands after the record the
// failed write left half-sent, which the client then reads as a bad
// record MAC. The TCP connection under it closes instead.
func closeAfterFailedWrite(nc net.Conn) error {
	if tc, ok := nc.(*tls.Conn); ok {
		return tc.NetConn().Close()
	}
	return nc.Close()
}
