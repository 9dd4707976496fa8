// Package rawhijack lets package websocket take a connection over from
// hotpath's server without the bufio.ReadWriter that http.Hijacker
// returns: a WebSocket keeps its own buffers (or, on the event API, none),
// and the 8 KB of bufio buffers a Hijack makes would be garbage at once,
// for every connection accepted. Package server sets Take when it is
// initialized; package websocket, which imports server, calls it first
// and falls back to http.ResponseController's Hijack when it reports that
// w is not the server's.
package rawhijack

import (
	"net"
	"net/http"
)

// Take takes w's connection over as http.Hijacker does, returning the
// bytes already read past the request head (the new owner's, to read
// first) instead of a bufio.Reader holding them. ok is false, and nothing
// done, when w is not hotpath's HTTP/1.1 ResponseWriter itself (a wrapper
// goes through http.ResponseController, which calls a Hijack of its own
// first). Nil until package server is initialized.
var Take func(w http.ResponseWriter) (nc net.Conn, pending []byte, ok bool, err error)
