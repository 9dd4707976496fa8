// Package client gives net/http users what seed 000's connection-reuse
// exercises and seed 002's draining experiment ask for, without leaving
// http.Client:
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
//   - [Transport]: a fast HTTP/1.1 http.RoundTripper that writes and reads on
//     the caller's goroutine with per-connection buffers, built on the same
//     [wire] codec as hotpath's server. What it does not do (HTTPS and
//     HTTP/2, proxies, protocol upgrades) it hands to a fallback
//     http.Transport.
package client
