// Command fasthttp-hello is the fasthttp peer for bench/server.sh: every
// path answers 200 "Hello, World!" with Date, Content-Type and
// Content-Length, and no Server header (NoDefaultServerHeader), so that it
// sends the same headers and body as the other servers' rows.
package main

import (
	"flag"
	"log"

	"github.com/valyala/fasthttp"
)

var hello = []byte("Hello, World!")

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()

	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBody(hello)
		},
		NoDefaultServerHeader: true,
	}
	log.Printf("fasthttp-hello: listening on %s", *addr)
	if err := srv.ListenAndServe(*addr); err != nil {
		log.Fatalf("fasthttp-hello: %v", err)
	}
}
