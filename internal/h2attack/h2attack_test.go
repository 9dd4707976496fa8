package h2attack

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// The attacks are checked against hotpath's engine in the server
// package (server/h2_attack_test.go); here, the library's own pieces, and
// a few attacks against net/http's HTTP/2 server as a reference.

func TestAppendInt(t *testing.T) {
	// RFC 7541 C.1.
	for _, c := range []struct {
		n    uint
		v    uint64
		want []byte
	}{
		{5, 10, []byte{0x0a}},
		{5, 1337, []byte{0x1f, 0x9a, 0x0a}},
		{8, 42, []byte{0x2a}},
	} {
		if got := appendInt(nil, 0, c.n, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("appendInt(%d-bit prefix, %d) = %x, want %x", c.n, c.v, got, c.want)
		}
	}
}

// decode decodes block with a fresh decoder and returns its fields as
// "name: value" lines.
func decode(t *testing.T, dec *h2.Decoder, block []byte) (string, error) {
	t.Helper()
	var b strings.Builder
	err := dec.Decode(block, func(f h2.Field) { b.WriteString(string(f.Name) + ": " + string(f.Value) + "\n") })
	return b.String(), err
}

func TestRawBlocks(t *testing.T) {
	var dec h2.Decoder
	got, err := decode(t, &dec, appendLiteral(appendRawRequest(nil, "http", "a.example", "/x"), "x-a", "b"))
	want := ":method: GET\n:scheme: http\n:authority: a.example\n:path: /x\nx-a: b\n"
	if err != nil || got != want {
		t.Fatalf("request block: %q, %v; want %q", got, err, want)
	}
	if size, _ := dec.TableSize(); size != 0 {
		t.Fatalf("the request block left %d bytes in the dynamic table, want none", size)
	}
	got, err = decode(t, &dec, appendRawRequest(nil, "https", "a", "/"))
	if want := ":method: GET\n:scheme: https\n:authority: a\n:path: /\n"; err != nil || got != want {
		t.Fatalf("request block: %q, %v; want %q", got, err, want)
	}

	got, err = decode(t, new(h2.Decoder), appendHuffmanAs(nil, "x-a", 16))
	if want := "x-a: " + strings.Repeat("a", 16) + "\n"; err != nil || got != want {
		t.Fatalf("Huffman-coded field: %q, %v; want %q", got, err, want)
	}

	if _, err := decode(t, new(h2.Decoder), appendBadHuffman(nil, "x-bad")); err == nil {
		t.Fatal("a Huffman string holding EOS decoded")
	}

	// A bomb: one entry inserted, then referred to bombRefs times.
	blk := appendInsert(nil, "x-bomb", strings.Repeat("b", 4096-32-6))
	for range bombRefs {
		blk = appendIndexed(blk, firstDynamicIndex)
	}
	if _, err := decode(t, new(h2.Decoder), blk); !errors.Is(err, h2.ErrHPACKBomb) {
		t.Fatalf("bomb: %v, want ErrHPACKBomb", err)
	}
}

func TestLookup(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range All {
		if seen[a.Name] {
			t.Errorf("two attacks named %q", a.Name)
		}
		seen[a.Name] = true
		if got, ok := Lookup(a.Name); !ok || got.Name != a.Name || a.Run == nil || a.Want == "" {
			t.Errorf("Lookup(%q) = %v, %v", a.Name, got.Name, ok)
		}
	}
	if _, ok := Lookup("no-such-attack"); ok {
		t.Error("Lookup found an attack that does not exist")
	}
}

// startNetHTTP serves h over net/http's HTTP/2 with prior knowledge.
func startNetHTTP(t *testing.T, h http.Handler) Config {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return Config{Addr: ln.Addr().String(), Reply: 5 * time.Second}
}

func TestAgainstNetHTTP(t *testing.T) {
	cfg := startNetHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "Hello, World!")
	}))
	ctx := context.Background()
	if d, err := Probe(ctx, cfg); err != nil || d <= 0 {
		t.Fatalf("Probe: %v, %v", d, err)
	}

	held := false
	c := cfg
	c.Hold = 50 * time.Millisecond
	c.OnHold = func() { held = true }
	r, err := PartialFrame(ctx, c)
	if err != nil || !r.PingAcked || !held || r.Status != "200" || r.DataRead != 13 {
		t.Errorf("PartialFrame: %v (%v), held %v", r, err, held)
	}

	r, err = HeaderListTooLarge(ctx, cfg)
	if err != nil || r.Status != "431" {
		t.Errorf("HeaderListTooLarge: %v (%v), want :status 431", r, err)
	}

	r, err = InvalidHuffman(ctx, cfg)
	if err != nil || r.GoAways != 1 || r.GoAwayCode != h2.ErrCodeCompression || r.ServerClosed != 1 {
		t.Errorf("InvalidHuffman: %v (%v), want GOAWAY COMPRESSION_ERROR and the connection closed", r, err)
	}

	// net/http answers the PINGs of a client that reads them. Two
	// seconds, for a thousand answers at least: in 200 ms the stress
	// series (-race beside busy loops) read 755. net/http closes the
	// connection (no GOAWAY) when 10,000 answers wait in its queue, which
	// its writer lets happen on one CPU (go test -cpu 1): the flood's own
	// writes take the CPU from it. So a close is net/http's, not a
	// failure, as long as the answers came first.
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	r, err = PingFlood(fctx, cfg)
	if err != nil || r.Frames < 1000 || r.BytesSent < 1000*17 || r.GoAways != 0 {
		t.Errorf("PingFlood: %v (%v), want a thousand PINGs answered at least, and no GOAWAY", r, err)
	}
}
