// Package depcheck checks what depending on hotpath's library costs a
// user: a module that imports the server, client and middleware packages
// must not pull the peers the lab and the benchmarks compare against.
package depcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryPullsNoPeers builds a scratch module importing hotpath's
// server, client, middleware and websocket (replace => this checkout) and
// checks its module graph lists no fasthttp, resty or req, and no
// WebSocket library: those belong to bench/peers and compat.
func TestLibraryPullsNoPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module scratch\n\ngo 1.26\n\nrequire github.com/hotpathhq/hotpath v0.0.0\n\nreplace github.com/hotpathhq/hotpath => "+root+"\n")
	write("main.go", `package main

import (
	_ "github.com/hotpathhq/hotpath/client"
	_ "github.com/hotpathhq/hotpath/middleware"
	_ "github.com/hotpathhq/hotpath/server"
	_ "github.com/hotpathhq/hotpath/websocket"
)

func main() {}
`)
	gocmd := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("mod", "tidy")
	graph := gocmd("mod", "graph")
	if !strings.Contains(graph, "github.com/hotpathhq/hotpath") {
		t.Fatalf("the graph does not list hotpath itself:\n%s", graph)
	}
	for _, peer := range []string{"valyala/fasthttp", "go-resty/resty", "imroc/req", "gorilla/websocket", "coder/websocket", "lxzan/gws", "lesismal/nbio", "gobwas/ws"} {
		if strings.Contains(graph, peer) {
			t.Errorf("go mod graph of a module importing server, client, middleware and websocket lists %s:\n%s", peer, graph)
		}
	}
	gocmd("build", "-o", os.DevNull, ".")
}
