package pool

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestBuffersDropOversized(t *testing.T) {
	p := NewBuffers(1024)
	big := p.Get()
	big.Write(make([]byte, 4096))
	p.Put(big)
	if got := p.Dropped(); got != 1 {
		t.Fatalf("Dropped = %d, want 1", got)
	}
	for range 1000 {
		b := p.Get()
		if b == big {
			t.Fatal("an oversized buffer came back from the pool")
		}
		if b.Len() != 0 {
			t.Fatalf("Get returned a buffer holding %d bytes", b.Len())
		}
		b.WriteString("small")
		p.Put(b)
	}
	if got := p.Dropped(); got != 1 {
		t.Fatalf("Dropped = %d after small buffers, want 1", got)
	}
	p.Put(nil) // ignored
	if NewBuffers(0).Max() != DefaultMaxBufferBytes {
		t.Fatal("NewBuffers(0) does not use DefaultMaxBufferBytes")
	}
}

func TestReadersResetBeforeReuse(t *testing.T) {
	p := NewReaders(16)
	br := p.Get(strings.NewReader("line one\nline two\n"))
	if line, _ := br.ReadString('\n'); line != "line one\n" {
		t.Fatalf("ReadString = %q", line)
	}
	p.Put(br) // "line two\n" is still buffered
	for range 100 {
		br := p.Get(strings.NewReader("fresh\n"))
		b, err := io.ReadAll(br)
		if err != nil || string(b) != "fresh\n" {
			t.Fatalf("reused reader read %q, %v; want only the new source", b, err)
		}
		p.Put(br)
	}
	p.Put(bufio.NewReaderSize(nil, 64)) // wrong size: dropped
	if br := p.Get(nil); br.Size() != 16 {
		t.Fatalf("Get returned a reader of size %d, want 16", br.Size())
	}
}

func TestWritersResetBeforeReuse(t *testing.T) {
	p := NewWriters(0)
	var first, second bytes.Buffer
	bw := p.Get(&first)
	bw.WriteString("unflushed")
	p.Put(bw)
	bw = p.Get(&second)
	bw.WriteString("ok")
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Put(bw)
	if first.Len() != 0 || second.String() != "ok" {
		t.Fatalf("first=%q second=%q: unflushed bytes leaked across borrowers", first.String(), second.String())
	}
	if bw := p.Get(io.Discard); bw.Size() != DefaultBufioSize {
		t.Fatalf("size %d, want %d", bw.Size(), DefaultBufioSize)
	}
}

// The benchmarks below are exercises 5 and 8 of seed 000: "before" (a fresh
// buffer or reader per request) against the pooled "after", for a body
// size where pooling pays (4 KiB) and for cases where it does not (a tiny
// body; bodies so varied that most pooled buffers are dropped).
//
// Measured on a 2-core VM, Go 1.26.8 (go test -bench . -benchmem -count 3):
// the table is in the package doc.

var sink [32]byte

func hashBody(b *testing.B, size int, get func() *bytes.Buffer, put func(*bytes.Buffer)) {
	body := bytes.Repeat([]byte("x"), size)
	r := bytes.NewReader(body)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(body)
		buf := get()
		if _, err := io.Copy(buf, r); err != nil {
			b.Fatal(err)
		}
		sink = sha256.Sum256(buf.Bytes())
		put(buf)
	}
}

func fresh() *bytes.Buffer                { return new(bytes.Buffer) }
func drop(*bytes.Buffer)                  {}
func BenchmarkBufferFresh4K(b *testing.B) { hashBody(b, 4<<10, fresh, drop) }
func BenchmarkBufferPooled4K(b *testing.B) {
	p := NewBuffers(0)
	hashBody(b, 4<<10, p.Get, p.Put)
}
func BenchmarkBufferFresh64B(b *testing.B) { hashBody(b, 64, fresh, drop) }
func BenchmarkBufferPooled64B(b *testing.B) {
	p := NewBuffers(0)
	hashBody(b, 64, p.Get, p.Put)
}

// BenchmarkBufferPooledChurn: every other body is larger than the pool's
// bound, so half the Puts drop their buffer: the "bodies vary wildly"
// case of exercise 5's "when NOT".
func BenchmarkBufferPooledChurn(b *testing.B) {
	p := NewBuffers(8 << 10)
	churn(b, p.Get, p.Put)
}

// BenchmarkBufferFreshChurn is the same load without a pool.
func BenchmarkBufferFreshChurn(b *testing.B) { churn(b, fresh, drop) }

func churn(b *testing.B, get func() *bytes.Buffer, put func(*bytes.Buffer)) {
	small := bytes.Repeat([]byte("x"), 4<<10)
	big := bytes.Repeat([]byte("x"), 64<<10)
	r := bytes.NewReader(nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := small
		if i%2 == 0 {
			body = big
		}
		r.Reset(body)
		buf := get()
		if _, err := io.Copy(buf, r); err != nil {
			b.Fatal(err)
		}
		sink = sha256.Sum256(buf.Bytes())
		put(buf)
	}
}

var lines = []byte(strings.Repeat("a line of some thirty-two bytes\n", 128)) // 4 KiB

func readLines(b *testing.B, get func(io.Reader) *bufio.Reader, put func(*bufio.Reader)) {
	r := bytes.NewReader(lines)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(lines)
		br := get(r)
		for {
			_, err := br.ReadSlice('\n')
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		put(br)
	}
}

func BenchmarkBufioReaderFresh(b *testing.B) {
	readLines(b, func(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }, func(*bufio.Reader) {})
}

func BenchmarkBufioReaderPooled(b *testing.B) {
	p := NewReaders(0)
	readLines(b, p.Get, p.Put)
}
