// Package load generates HTTP load and measures it honestly: closed loop
// (Config.Connections, each sending as soon as its last response is in)
// or open loop (Config.Rate in all, each request timed from its
// intended send time so that coordinated omission is corrected, as in
// wrk2), latency in HdrHistograms recorded per worker and merged,
// connection reuse and phase timings, the generator's own CPU, and
// warnings when the generator rather than the server may be the limit.
//
// Three engines send the requests: the fast engine, hotpath's own on the
// wire packages (cleartext HTTP/1.1 on wire, h2 and h2c on wire/h2, with
// many streams per connection, frames batched per syscall; no allocation
// per request); hotpath's client.Transport; and net/http's Transport for
// TLS, HTTP/2 and h2c with a full httptrace. Every response is checked
// against the protocol asked for, and a run that got another one fails.
//
//	res, err := load.Run(ctx, load.Config{URL: "http://127.0.0.1:8080/", Connections: 50, Rate: 10000, Duration: 30 * time.Second})
//	res.WriteText(os.Stdout) // or WriteJSON, WriteHgrm, WriteHTML, WriteMarkdown
//
// Results serialize to JSON (schema.json) with their histograms in
// HdrHistogram's lossless encoding, so Merge combines runs made from
// several machines exactly, and evaluates the runs' Thresholds again on
// the sum. `hotpath load` is the command line; its flags' text forms
// (--stages, --body, --targets files) are its own, and this package takes
// the values they describe.
package load
