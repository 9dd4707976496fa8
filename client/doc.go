// Package client gives net/http users a cheaper, better-bounded client
// without leaving http.Client: connections that are reused, bodies
// drained within bounds, and a transport on hotpath's own codecs.
//
//   - [New]: one shared, tuned *http.Client. Per-host idle pools sized for
//     concurrency, bounded timeouts, a TLS session cache per client (never
//     shared, so client certificates never mix), HTTP/2 attempted, proxies
//     from the environment; http.DefaultTransport is never touched.
//   - Bounded drain on Close ([DrainBody], on by default in New): a body
//     closed before EOF is read to its end, within a byte and a time cap,
//     so its keep-alive connection goes back to the pool instead of being
//     torn down.
//   - Reuse statistics ([Stats]): requests, new and reused connections,
//     DNS, connect, TLS and time-to-headers distributions, cheap enough to
//     leave on.
//   - [Transport]: a fast http.RoundTripper on the same codecs as
//     hotpath's server: HTTP/1.1 ([wire]) written and read on the caller's
//     goroutine with per-connection buffers, TLS on its own connections,
//     and HTTP/2 ([h2], package wire/h2) by ALPN or with prior knowledge, streams
//     multiplexed over as many connections per host as they need. What it
//     does not do (proxies, CONNECT, protocol upgrades) it hands to a
//     fallback http.Transport.
//
// A request body in memory (what http.NewRequest gives a GetBody) leaves
// with its head in as few writes as it takes. Any other body streams, as
// with net/http's transport: the head leaves at once, each piece as the
// body yields it, on a goroutine of the upload's own while the response
// is read, so a server that answers before the body ends is heard, and a
// body fed by the response (a relay, a duplex exchange) never deadlocks.
// Request.Cancel is honoured as the context is, and ResponseHeaderTimeout
// counts from the request's end on both protocols.
//
// Code that builds its own *http.Transport swaps it in one line with
// [FromHTTPTransport], each field read with net/http's meaning; Go's own
// client and transport tests run that way (internal/nethttpsuite).
package client
