// Module peers holds the servers, clients and tools that bench/ and
// hotpath lab (003-clients: cmd/lab-clients, built by the lab) compare
// hotpath against. It is a separate module so that the library's go.mod
// never depends on fasthttp, resty or req.
module github.com/hotpathhq/hotpath/bench/peers

go 1.26.0

require github.com/valyala/fasthttp v1.62.0

require (
	github.com/andybalholm/brotli v1.2.0 // indirect
	github.com/cloudflare/circl v1.6.1 // indirect
	github.com/dolthub/maphash v0.1.0 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/icholy/digest v1.1.0 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/lesismal/llib v1.2.2 // indirect
	github.com/quic-go/qpack v0.5.1 // indirect
	github.com/quic-go/quic-go v0.53.0 // indirect
	github.com/refraction-networking/utls v1.7.3 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/mock v0.5.2 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

require (
	github.com/coder/websocket v1.8.15
	github.com/go-resty/resty/v2 v2.17.2
	github.com/gorilla/websocket v1.5.3
	github.com/hotpathhq/hotpath v0.0.0
	github.com/imroc/req/v3 v3.54.0
	github.com/lesismal/nbio v1.6.8
	github.com/lxzan/gws v1.8.9
)

replace github.com/hotpathhq/hotpath => ../..
