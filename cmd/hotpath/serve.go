package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/internal/endpoints"
	"github.com/hotpathhq/hotpath/server"
)

const serveExample = `
Endpoints:
  /            Hello, World! (text/plain)
  /json        {"message":"Hello, World!"}
  /bytes/{n}   n bytes of body
  /stream/{n}  n bytes through io.Copy from a reader that is not a file
  /echo        echoes the request body
  /discard     reads the request body, answers its length
  /files/...   the files under --files DIR (http.FileServer; handler API and nethttp)
  /delay/{ms}  Hello, World! after ms milliseconds
  /goroutines  the server's goroutine count (for benches under attack)
  /events/{s}  server-sent events, one a second for s seconds (a long-lived stream)
  /ws          WebSocket echo, text and binary (the event API: no goroutine while idle),
               over HTTP/1.1 and HTTP/2 (RFC 8441)

Example:
  hotpath serve --addr 127.0.0.1:8080 --engine hotpath --api handler
  hotpath serve --stall 1s/5s     # freeze 1 s in every 5 s: compare hotpath load -c with --rate
  curl -i http://127.0.0.1:8080/json
`

// runServe implements `hotpath serve`.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "`address` to listen on (host:port; port 0 picks a free one)")
	engine := fs.String("engine", "hotpath", "`engine` to serve with: hotpath or nethttp (net/http, same endpoints, same timeouts)")
	api := fs.String("api", "native", "with --engine hotpath, the `API` the endpoints are written against: native (server.Ctx) or handler (the same http.Handler net/http serves)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the server's run to `file` (inspect with go tool pprof)")
	grace := fs.Duration("grace", 10*time.Second, "how long SIGINT/SIGTERM waits for requests in progress before closing")
	useTLS := fs.Bool("tls", false, "serve HTTPS, HTTP/2 and HTTP/1.1 by ALPN, with a self-signed certificate made at start (clients must skip verification) unless --cert and --key are given")
	certFile := fs.String("cert", "", "TLS certificate `file` (PEM; with --key; implies --tls)")
	keyFile := fs.String("key", "", "TLS private key `file` (PEM; with --cert)")
	h2c := fs.Bool("h2c", false, "also serve cleartext HTTP/2 with prior knowledge on the plain port, as h2spec and h2load speak it")
	handOff := fs.Bool("h2-handoff", false, "with --engine hotpath, hand HTTP/2 (--tls or --h2c) to net/http's HTTP/2 server inside hotpath's limits instead of serving it on hotpath's own HTTP/2 engine (for comparison; --api handler)")
	files := fs.String("files", "", "serve the files under `DIR` at /files/ with http.FileServer (--api handler or --engine nethttp)")
	countFlag := fs.Bool("count", false, "count the requests served and print the count when stopped (to check a load generator's count against the server's)")
	maxBody := fs.Int64("max-body", 0, "with --engine hotpath, the cap on a request body in `bytes` (larger gets 413); 0 keeps the engine's default (none for --api handler, as net/http; 4 MiB for native), -1 lifts it")
	stallFlag := fs.String("stall", "", "freeze every response for `PAUSE/EVERY`, e.g. 1s/5s: requests arriving in the last second of every 5 s wait until it ends (shows coordinated omission in load generators)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath serve [flags]\n\nServes hotpath's demo endpoints until SIGINT or SIGTERM, then shuts down gracefully.\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), serveExample)
	}
	if _, rc, ok := parseFlags(fs, args, false, stdout, stderr); !ok {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hotpath serve: unexpected argument %q (flags only)\n", fs.Arg(0))
		return 2
	}

	var stall *endpoints.Stall
	if *stallFlag != "" {
		st, err := endpoints.ParseStall(*stallFlag)
		if err != nil {
			fmt.Fprintf(stderr, "hotpath serve: --stall: %v\n", err)
			return 2
		}
		stall = &st
	}
	native, handler := endpoints.Native, endpoints.Handler()
	var served atomic.Int64
	if *countFlag {
		innerNative, innerHandler := native, handler
		native = func(c *server.Ctx) { served.Add(1); innerNative(c) }
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1); innerHandler.ServeHTTP(w, r) })
	}
	if *files != "" {
		if *engine == "hotpath" && *api == "native" {
			fmt.Fprintln(stderr, "hotpath serve: --files needs --api handler (or --engine nethttp): it serves http.FileServer")
			return 2
		}
		mux := http.NewServeMux()
		mux.Handle("/files/", http.StripPrefix("/files/", http.FileServer(http.Dir(*files))))
		mux.Handle("/", handler)
		handler = mux
	}
	if stall != nil {
		native, handler = stall.Native(native), stall.Handler(handler)
	}

	if (*certFile == "") != (*keyFile == "") {
		fmt.Fprintln(stderr, "hotpath serve: --cert and --key go together")
		return 2
	}
	if *handOff && (*engine != "hotpath" || *api != "handler" || !*h2c && !*useTLS && *certFile == "") {
		fmt.Fprintln(stderr, "hotpath serve: --h2-handoff hands hotpath's HTTP/2 to net/http's server, which serves the http.Handler endpoints: it needs --engine hotpath --api handler, and --tls or --h2c")
		return 2
	}
	if *h2c && (*useTLS || *certFile != "") {
		fmt.Fprintln(stderr, "hotpath serve: --h2c is cleartext HTTP/2; with --tls, HTTP/2 is negotiated by ALPN: pick one")
		return 2
	}
	var tlsConfig *tls.Config
	if *useTLS || *certFile != "" {
		var cert tls.Certificate
		var err error
		if *certFile != "" {
			cert, err = tls.LoadX509KeyPair(*certFile, *keyFile)
		} else {
			cert, err = selfSignedCert()
		}
		if err != nil {
			fmt.Fprintf(stderr, "hotpath serve: TLS: %v\n", err)
			return 1
		}
		// NextProtos left empty: both servers offer h2 and http/1.1.
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}

	if _, _, err := net.SplitHostPort(*addr); err != nil {
		fmt.Fprintf(stderr, "hotpath serve: --addr %q: want host:port, e.g. 127.0.0.1:8080 (port 0 picks a free one)\n", *addr)
		return 2
	}
	if *engine == "nethttp" && flagSet(fs, "max-body") {
		fmt.Fprintln(stderr, "hotpath serve: --max-body is for --engine hotpath: net/http has no body cap (its handlers use http.MaxBytesReader)")
		return 2
	}
	if *engine == "nethttp" && flagSet(fs, "api") {
		fmt.Fprintln(stderr, "hotpath serve: --api is for --engine hotpath: net/http serves the http.Handler endpoints (drop --api, or use --engine hotpath)")
		return 2
	}
	var serve func(net.Listener) error
	var shutdown func(context.Context) error
	switch *engine {
	case "hotpath":
		// ExtendedConnect: /ws takes WebSockets over HTTP/2 too (RFC 8441),
		// as browsers open them once a page came over HTTP/2.
		srv := &server.Server{MaxRequestBodyBytes: *maxBody, ExtendedConnect: true}
		switch *api {
		case "native":
			srv.Native = native
		case "handler":
			srv.Handler = handler
		default:
			fmt.Fprintf(stderr, "hotpath serve: unknown API %q: use --api native or --api handler\n", *api)
			return 2
		}
		if *h2c {
			var p http.Protocols
			p.SetHTTP1(true)
			p.SetHTTP2(true)
			p.SetUnencryptedHTTP2(true)
			srv.Protocols = &p
		}
		srv.HTTP2HandOff = *handOff
		serve, shutdown = srv.Serve, srv.Shutdown
		if tlsConfig != nil {
			srv.TLSConfig = tlsConfig
			serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
		}
	case "nethttp":
		srv := &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: server.DefaultReadHeaderTimeout,
			IdleTimeout:       server.DefaultIdleTimeout,
			TLSConfig:         tlsConfig,
		}
		if *h2c {
			srv.Protocols = new(http.Protocols)
			srv.Protocols.SetHTTP1(true)
			srv.Protocols.SetUnencryptedHTTP2(true)
		}
		serve, shutdown = srv.Serve, srv.Shutdown
		if tlsConfig != nil {
			serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
		}
	default:
		fmt.Fprintf(stderr, "hotpath serve: unknown engine %q: use --engine hotpath or --engine nethttp\n", *engine)
		return 2
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "hotpath serve: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "hotpath serve: cpu profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}

	// Listen for signals before the URL is printed: whoever reads it may
	// signal us straight away.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "hotpath serve: cannot listen on %s: %v%s\n", *addr, err, listenHint(err))
		return 1
	}
	what := *engine + " engine,"
	if *engine == "hotpath" {
		what = "hotpath engine, " + *api + " API,"
	}
	if stall != nil {
		what += fmt.Sprintf(" stalling %v every %v,", stall.Pause, stall.Every)
		stall.Start = time.Now()
	}
	scheme := "http"
	switch {
	case tlsConfig != nil:
		scheme = "https"
		what += " HTTP/2 and HTTP/1.1 over TLS,"
	case *h2c:
		what += " HTTP/1.1 and h2c,"
	}
	if *handOff {
		what += " HTTP/2 handed to net/http's server,"
	}
	fmt.Fprintf(stdout, "hotpath serve: %s listening on %s://%s/ (Ctrl-C to stop)\n", what, scheme, ln.Addr())

	done := make(chan error, 1)
	go func() { done <- serve(ln) }()

	select {
	case err := <-done:
		fmt.Fprintf(stderr, "hotpath serve: %v\n", err)
		return 1
	case sig := <-sigs:
		fmt.Fprintf(stdout, "hotpath serve: %v received, finishing requests in progress (up to %v)\n", sig, *grace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "hotpath serve: shutdown: %v\n", err)
		return 1
	}
	<-done
	if *countFlag {
		fmt.Fprintf(stdout, "hotpath serve: stopped after %d requests\n", served.Load())
		return 0
	}
	fmt.Fprintln(stdout, "hotpath serve: stopped")
	return 0
}

// selfSignedCert makes an ECDSA certificate for 127.0.0.1 and localhost,
// valid for a day, for --tls.
func selfSignedCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "hotpath serve --tls"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// listenHint says what to do about a listen error, when it is one a user
// can fix.
func listenHint(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return " (another server is on that port: pick another, or --addr 127.0.0.1:0 for a free one)"
	case errors.Is(err, syscall.EACCES):
		return " (ports below 1024 need privileges: pick a port from 1024 up)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return " (that address is not one of this machine's: try 127.0.0.1 or 0.0.0.0)"
	}
	return ""
}
