// Command lab-clients runs one client library of hotpath lab's
// 003-clients (see package labclients) in its own process, so that the
// library's go.mod needs none of them and the figures (ns/op, B/op,
// allocs/op) are the client's alone. The lab builds it and drives it with
// one command per line on stdin; every answer is one line, "ok ..." or
// "err MESSAGE":
//
//	new ID CONNS              a client with a pool of CONNS connections
//	call ID KIND              one request, its body checked   -> ok
//	calibrate ID KIND DUR     a count that fills DUR           -> ok N
//	time ID KIND N            N sequential requests           -> ok NS BYTES ALLOCS
//	concurrent ID KIND W DUR  W goroutines for DUR            -> ok NS BYTES ALLOCS
//
// -list prints the clients (name and the code the report shows), the
// baseline first. KIND is get, post or headers; the requests, and the bodies the server
// must answer, are given once as JSON with -spec.
//
//	lab-clients -client "resty v2" -spec '{"get":"http://...","want_get":"..."}'
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/bench/peers/labclients"
	"github.com/hotpathhq/hotpath/internal/microbench"
)

// spec is what every request sends and what its answer must be.
type spec struct {
	Get         string      `json:"get"`          // URL of the GET
	WantGet     string      `json:"want_get"`     // its body
	Post        string      `json:"post"`         // URL of the POST
	PostBody    string      `json:"post_body"`    // the JSON sent (and echoed)
	Headers     string      `json:"headers"`      // URL of the GET with headers
	HeaderList  [][2]string `json:"header_list"`  // the headers sent
	WantHeaders string      `json:"want_headers"` // its body
}

func main() {
	name := flag.String("client", "", "the client: one of labclients.Arms' names")
	specJSON := flag.String("spec", "", "the requests, as JSON (see the package doc)")
	list := flag.Bool("list", false, "print the clients as JSON ([{\"name\", \"code\"}]) and exit")
	flag.Parse()
	if *list {
		type entry struct {
			Name string `json:"name"`
			Code string `json:"code"`
		}
		var all []entry
		for _, a := range labclients.Arms {
			all = append(all, entry{a.Name, a.Code})
		}
		json.NewEncoder(os.Stdout).Encode(all)
		return
	}
	arm, ok := labclients.Find(*name)
	if !ok {
		fmt.Fprintf(os.Stderr, "lab-clients: unknown client %q\n", *name)
		os.Exit(2)
	}
	var sp spec
	if err := json.Unmarshal([]byte(*specJSON), &sp); err != nil {
		fmt.Fprintf(os.Stderr, "lab-clients: -spec: %v\n", err)
		os.Exit(2)
	}
	d := &driver{arm: arm, spec: sp, clients: map[string]labclients.Client{}}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		reply, err := d.do(strings.Fields(in.Text()))
		if err != nil {
			reply = "err " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		fmt.Fprintln(out, reply)
		out.Flush()
	}
	for _, c := range d.clients {
		c.Close()
	}
}

type driver struct {
	arm     labclients.Arm
	spec    spec
	clients map[string]labclients.Client
}

// do runs one command and returns its "ok ..." answer.
func (d *driver) do(f []string) (string, error) {
	if len(f) < 2 {
		return "", errors.New("want a command and a client ID")
	}
	cmd, id, args := f[0], f[1], f[2:]
	if cmd == "new" {
		conns, err := intArg(args, 0)
		if err != nil {
			return "", err
		}
		d.clients[id] = d.arm.New(conns)
		return "ok", nil
	}
	c, ok := d.clients[id]
	if !ok {
		return "", fmt.Errorf("no client %q (send new first)", id)
	}
	if len(args) == 0 {
		return "", errors.New("want a request kind: get, post or headers")
	}
	call, err := d.request(c, args[0])
	if err != nil {
		return "", err
	}
	args = args[1:]
	switch cmd {
	case "call":
		return "ok", call()
	case "calibrate":
		dur, err := durArg(args, 0)
		if err != nil {
			return "", err
		}
		n, err := microbench.Calibrate(microbench.Repeat(call), dur)
		return "ok " + strconv.Itoa(n), err
	case "time":
		n, err := intArg(args, 0)
		if err != nil {
			return "", err
		}
		s, err := microbench.Time(microbench.Repeat(call), n)
		return sample(s), err
	case "concurrent":
		w, err := intArg(args, 0)
		if err != nil {
			return "", err
		}
		dur, err := durArg(args, 1)
		if err != nil {
			return "", err
		}
		s, err := microbench.Concurrent(context.Background(), w, dur, call)
		return sample(s), err
	}
	return "", fmt.Errorf("unknown command %q", cmd)
}

// request returns one request of kind with c, checking the answer.
func (d *driver) request(c labclients.Client, kind string) (func() error, error) {
	sp := d.spec
	switch kind {
	case "get":
		use := same(sp.WantGet)
		return func() error { return c.Get(sp.Get, use) }, nil
	case "post":
		body, use := []byte(sp.PostBody), same(sp.PostBody)
		return func() error { return c.PostJSON(sp.Post, body, use) }, nil
	case "headers":
		use := same(sp.WantHeaders)
		return func() error { return c.GetWithHeaders(sp.Headers, sp.HeaderList, use) }, nil
	}
	return nil, fmt.Errorf("unknown request kind %q", kind)
}

// same returns a body check: the body must equal want.
func same(want string) func([]byte) error {
	return func(b []byte) error {
		if string(b) != want {
			return fmt.Errorf("body %q, want %q", b, want)
		}
		return nil
	}
}

func sample(s microbench.Sample) string {
	return fmt.Sprintf("ok %g %g %g", s.Ns, s.Bytes, s.Allocs)
}

func intArg(args []string, i int) (int, error) {
	if i >= len(args) {
		return 0, errors.New("missing a count")
	}
	n, err := strconv.Atoi(args[i])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("bad count %q", args[i])
	}
	return n, nil
}

func durArg(args []string, i int) (time.Duration, error) {
	if i >= len(args) {
		return 0, errors.New("missing a duration")
	}
	return time.ParseDuration(args[i])
}
