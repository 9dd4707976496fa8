package h2

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/net/http2"
)

// blockOps turns fuzz bytes into a frame sequence: each byte picks a frame
// type, a stream (1 or 3), END_HEADERS, and a fragment of 0 to 3 bytes.
// PUSH_PROMISE is left out: x/net's Framer does not let CONTINUATION follow
// it (RFC 9113 §6.10 does), so the two would differ by design.
func blockOps(ops []byte) []byte {
	var wire []byte
	for i, op := range ops {
		stream := uint32(1 + 2*(op>>7&1))
		flags := Flags(0)
		if op&0x40 != 0 {
			flags |= FlagEndHeaders
		}
		frag := bytes.Repeat([]byte{byte(i)}, int(op>>4&3))
		switch op & 0x7 {
		case 0, 1, 2:
			wire = AppendHeaders(wire, stream, flags, Priority{}, frag, 0)
		case 3, 4, 5:
			wire = AppendContinuation(wire, stream, flags, frag)
		case 6:
			wire = AppendData(wire, stream, 0, frag, 0)
		case 7:
			if op&0x8 != 0 {
				wire = AppendPing(wire, 0, [8]byte{})
			} else {
				wire = AppendFrameHeader(wire, FrameHeader{Length: uint32(len(frag)), Type: 0xfa, StreamID: stream})
				wire = append(wire, frag...)
			}
		}
	}
	return wire
}

type blockResult struct {
	blocks []string // "stream:fragment" of each complete block
	errAt  int      // index of the frame that failed, -1 for none
}

func assembleOurs(t testing.TB, a *Assembler, wire []byte) blockResult {
	r := blockResult{errAt: -1}
	for i := 0; len(wire) > 0; i++ {
		f, n, err := ReadFrame(wire, DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("ReadFrame: %v", err)
		}
		wire = wire[n:]
		st, err := a.Add(&f)
		if a.MaxBlockSize > 0 && a.BufferCap() > a.MaxBlockSize {
			t.Fatalf("buffer capacity %d past MaxBlockSize %d", a.BufferCap(), a.MaxBlockSize)
		}
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Stream {
				t.Fatalf("assembler error %v is not a connection error", err)
			}
			r.errAt = i
			return r
		}
		if st == BlockDone {
			b := a.Block()
			r.blocks = append(r.blocks, string(rune('0'+b.Start.StreamID))+":"+string(b.Fragment))
		}
	}
	return r
}

// assembleXNet reads the frames with x/net's Framer, which checks the
// order of HEADERS and CONTINUATION frames, and joins fragments itself.
func assembleXNet(t testing.TB, wire []byte) blockResult {
	r := blockResult{errAt: -1}
	fr := http2.NewFramer(nil, bytes.NewReader(wire))
	var cur []byte
	var stream uint32
	for i := 0; ; i++ {
		f, err := fr.ReadFrame()
		if err == io.EOF {
			return r
		}
		if err != nil {
			if _, ok := err.(http2.ConnectionError); !ok {
				t.Fatalf("x/net: %v", err)
			}
			r.errAt = i
			return r
		}
		var frag []byte
		var end bool
		switch f := f.(type) {
		case *http2.HeadersFrame:
			cur, stream, frag, end = cur[:0], f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded()
		case *http2.ContinuationFrame:
			frag, end = f.HeaderBlockFragment(), f.HeadersEnded()
		default:
			continue
		}
		cur = append(cur, frag...)
		if end {
			r.blocks = append(r.blocks, string(rune('0'+stream))+":"+string(cur))
		}
	}
}

func compareBlocks(t testing.TB, ops []byte) {
	wire := blockOps(ops)
	a := Assembler{MaxContinuations: len(ops) + 1}
	ours, theirs := assembleOurs(t, &a, wire), assembleXNet(t, wire)
	if ours.errAt != theirs.errAt || len(ours.blocks) != len(theirs.blocks) {
		t.Fatalf("ops %x: ours %+v, x/net %+v", ops, ours, theirs)
	}
	for i := range ours.blocks {
		if ours.blocks[i] != theirs.blocks[i] {
			t.Fatalf("ops %x: block %d: ours %q, x/net %q", ops, i, ours.blocks[i], theirs.blocks[i])
		}
	}
}

var blockSeeds = [][]byte{
	{0x40},                   // HEADERS END_HEADERS
	{0x10, 0x23, 0x63},       // HEADERS, CONTINUATION, CONTINUATION END_HEADERS
	{0x10, 0x06},             // HEADERS, DATA: interrupted
	{0x10, 0xa3},             // CONTINUATION on stream 3
	{0x43},                   // CONTINUATION first
	{0x10, 0x0f},             // PING inside a block
	{0x10, 0x07},             // unknown type inside a block
	{0x40, 0x06, 0x0f, 0xc0}, // whole blocks around other frames
	{0x10, 0x13, 0x13, 0x13, 0x53, 0x43},
}

// The Assembler accepts and refuses the same frame sequences as x/net's
// Framer, at the same frame, and joins the same blocks.
func TestAssemblerAgainstXNet(t *testing.T) {
	for _, ops := range blockSeeds {
		compareBlocks(t, ops)
	}
	// Every sequence of three frames with one-byte fragments: each of
	// HEADERS, CONTINUATION, DATA, PING and an unknown type, with and
	// without END_HEADERS, on stream 1 or 3.
	var kinds []byte
	for _, k := range []byte{0, 3, 6, 7, 0xf} {
		for _, bits := range []byte{0, 0x40, 0x80, 0xc0} {
			kinds = append(kinds, k|bits|0x10)
		}
	}
	n := 0
	for _, a := range kinds {
		for _, b := range kinds {
			for _, c := range kinds {
				compareBlocks(t, []byte{a, b, c})
				n++
			}
		}
	}
	if n != 8000 {
		t.Fatalf("compared %d sequences", n)
	}
}

func FuzzAssembler(f *testing.F) {
	for _, s := range blockSeeds {
		f.Add(s, uint16(0))
	}
	f.Fuzz(func(t *testing.T, ops []byte, limit uint16) {
		if len(ops) > 256 {
			return
		}
		compareBlocks(t, ops)
		// With small caps the assembler stops earlier, never later, and
		// its buffer stays under the cap.
		a := Assembler{MaxBlockSize: int(limit%64) + 1, MaxContinuations: int(limit >> 8 % 8)}
		wire := blockOps(ops)
		capped, free := assembleOurs(t, &a, wire), assembleXNet(t, wire)
		if free.errAt >= 0 && (capped.errAt < 0 || capped.errAt > free.errAt) {
			t.Fatalf("ops %x: capped assembler failed at %d, x/net at %d", ops, capped.errAt, free.errAt)
		}
	})
}
