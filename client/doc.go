// Package client gives net/http users a cheaper, better-bounded client
// without leaving http.Client: connections that are reused, bodies
// drained within bounds, and a transport on hotpath's own codecs.
//
//   - [New]: one shared, tuned *http.Client in one line. Per-host idle
//     pools sized for concurrency, bounded timeouts, a TLS session cache
//     per client (never shared, so client certificates never mix), HTTP/2
//     attempted, proxies from the environment; http.DefaultTransport is
//     never touched. It is [NewTransport]'s Transport in an http.Client.
//   - [Transport]: a fast http.RoundTripper on the same codecs as
//     hotpath's server: HTTP/1.1 ([wire]) written and read on the caller's
//     goroutine with per-connection buffers, TLS on its own connections,
//     and HTTP/2 ([h2], package wire/h2) by ALPN or with prior knowledge, streams
//     multiplexed over as many connections per host as they need. What it
//     does not do (proxies, CONNECT, protocol upgrades) it hands to a
//     fallback http.Transport built from the same fields.
//   - Bounded drain on Close (on by default; Transport.DrainMaxBytes and
//     DrainTimeout, or [DrainBody] around any other RoundTripper): a body
//     closed before EOF is read to its end, within a byte and a time cap,
//     so its keep-alive connection goes back to the pool instead of being
//     torn down.
//   - Reuse statistics ([Stats], set as Transport.Stats): requests, new
//     and reused connections, DNS, connect, TLS and time-to-headers
//     distributions, cheap enough to leave on.
//
// Every setting is a field of Transport, as an http.Transport's are, and
// has that one place: an [Option] of [New] sets those fields too. Code that
// stays on net/http's transport gets the same defaults from
// [NewHTTPTransport].
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
