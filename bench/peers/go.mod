// Module peers holds the servers and tools that bench/server.sh compares
// hotpath against. It is a separate module so that the library's go.mod
// never depends on fasthttp.
module github.com/hotpathhq/hotpath/bench/peers

go 1.24

require github.com/valyala/fasthttp v1.62.0

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
