// Command nethttp-hello is the plain net/http baseline for bench/server.sh:
// an http.Server with default settings whose handler answers every path with
// 200 "Hello, World!". net/http adds Date and Content-Length itself.
//
// It is deliberately the code a Go engineer would write first, with no
// tuning, so that it measures net/http and not our configuration of it.
package main

import (
	"flag"
	"log"
	"net/http"
)

var hello = []byte("Hello, World!")

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(hello)
	})
	log.Printf("nethttp-hello: listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, h))
}
