package h2

import (
	"bytes"
	"errors"
	"testing"
)

// read parses one raw frame, as a connection would before Assembler.Add.
func read(t testing.TB, raw []byte) *Frame {
	t.Helper()
	f, n, err := ReadFrame(raw, DefaultMaxFrameSize)
	if err != nil && !isStreamErr(err) || n != len(raw) {
		t.Fatalf("ReadFrame(%x) = %d, %v", raw, n, err)
	}
	return &f
}

func isStreamErr(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Stream
}

func headers(stream uint32, flags Flags, frag ...byte) []byte {
	return frame(-1, FrameHeaders, flags, stream, frag...)
}

func continuation(stream uint32, flags Flags, frag ...byte) []byte {
	return frame(-1, FrameContinuation, flags, stream, frag...)
}

func TestAssemblerOrder(t *testing.T) {
	ping := frame(-1, FramePing, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	data := frame(-1, FrameData, 0, 1, 'x')
	tests := []struct {
		name   string
		frames [][]byte
		want   []BlockStatus // per frame, up to the error
		err    error
		block  string // the assembled block when the last frame is BlockDone
	}{
		{"single frame", [][]byte{headers(1, FlagEndHeaders, 'a', 'b')}, []BlockStatus{BlockDone}, nil, "ab"},
		{"empty single frame", [][]byte{headers(1, FlagEndHeaders)}, []BlockStatus{BlockDone}, nil, ""},
		{"headers + 2 continuations (§6.10)", [][]byte{
			headers(1, 0, 'a'), continuation(1, 0, 'b', 'c'), continuation(1, FlagEndHeaders, 'd'),
		}, []BlockStatus{BlockOpen, BlockOpen, BlockDone}, nil, "abcd"},
		{"empty continuations are legal", [][]byte{
			headers(1, 0), continuation(1, 0), continuation(1, FlagEndHeaders, 'a'),
		}, []BlockStatus{BlockOpen, BlockOpen, BlockDone}, nil, "a"},
		{"push promise + continuation", [][]byte{
			frame(-1, FramePushPromise, 0, 1, 0, 0, 0, 2, 'a'), continuation(1, FlagEndHeaders, 'b'),
		}, []BlockStatus{BlockOpen, BlockDone}, nil, "ab"},
		{"other frames around whole blocks", [][]byte{
			ping, headers(1, FlagEndHeaders, 'a'), data, headers(3, 0, 'b'), continuation(3, FlagEndHeaders, 'c'), ping,
		}, []BlockStatus{NotBlock, BlockDone, NotBlock, BlockOpen, BlockDone, NotBlock}, nil, ""},
		// §6.10: CONTINUATION only after a frame without END_HEADERS.
		{"continuation first", [][]byte{continuation(1, FlagEndHeaders, 'a')}, nil, ErrUnexpectedContinuation, ""},
		{"continuation after a whole block", [][]byte{
			headers(1, FlagEndHeaders, 'a'), continuation(1, FlagEndHeaders, 'b'),
		}, []BlockStatus{BlockDone}, ErrUnexpectedContinuation, ""},
		{"continuation after the block ended", [][]byte{
			headers(1, 0, 'a'), continuation(1, FlagEndHeaders, 'b'), continuation(1, FlagEndHeaders, 'c'),
		}, []BlockStatus{BlockOpen, BlockDone}, ErrUnexpectedContinuation, ""},
		{"continuation after data", [][]byte{data, continuation(1, FlagEndHeaders)}, []BlockStatus{NotBlock}, ErrUnexpectedContinuation, ""},
		// §4.3, §6.10: nothing between the frames of a block.
		{"ping inside a block", [][]byte{headers(1, 0, 'a'), ping}, []BlockStatus{BlockOpen}, ErrExpectedContinuation, ""},
		{"data inside a block", [][]byte{headers(1, 0, 'a'), data}, []BlockStatus{BlockOpen}, ErrExpectedContinuation, ""},
		{"headers inside a block", [][]byte{headers(1, 0, 'a'), headers(3, FlagEndHeaders, 'b')}, []BlockStatus{BlockOpen}, ErrExpectedContinuation, ""},
		{"same-stream headers inside a block", [][]byte{headers(1, 0, 'a'), headers(1, FlagEndHeaders, 'b')}, []BlockStatus{BlockOpen}, ErrExpectedContinuation, ""},
		{"unknown frame type inside a block (§5.5)", [][]byte{headers(1, 0, 'a'), frame(-1, 0xfa, 0, 0)}, []BlockStatus{BlockOpen}, ErrExpectedContinuation, ""},
		{"interleaved after a continuation", [][]byte{
			headers(1, 0, 'a'), continuation(1, 0, 'b'), frame(-1, FramePriority, 0, 3, 0, 0, 0, 1, 0),
		}, []BlockStatus{BlockOpen, BlockOpen}, ErrExpectedContinuation, ""},
		// §6.10: the CONTINUATION must be on the block's stream.
		{"continuation on another stream", [][]byte{headers(1, 0, 'a'), continuation(3, FlagEndHeaders, 'b')}, []BlockStatus{BlockOpen}, ErrExpectedContinuation, ""},
		{"later continuation on another stream", [][]byte{
			headers(1, 0, 'a'), continuation(1, 0, 'b'), continuation(5, FlagEndHeaders, 'c'),
		}, []BlockStatus{BlockOpen, BlockOpen}, ErrExpectedContinuation, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Assembler
			var st BlockStatus
			var err error
			for i, raw := range tt.frames {
				st, err = a.Add(read(t, raw))
				if err != nil {
					if i != len(tt.want) {
						t.Fatalf("frame %d: error %v, want it at frame %d", i, err, len(tt.want))
					}
					break
				}
				if st != tt.want[i] {
					t.Fatalf("frame %d: status %d, want %d", i, st, tt.want[i])
				}
			}
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Stream {
					t.Errorf("%v is not a connection error", err)
				}
				if _, open := a.Open(); open {
					t.Error("assembler still open after an error")
				}
				return
			}
			if st == BlockDone && tt.block != "" && string(a.Block().Fragment) != tt.block {
				t.Errorf("block %q, want %q", a.Block().Fragment, tt.block)
			}
		})
	}
}

func TestAssemblerBlockFields(t *testing.T) {
	var a Assembler
	prio := []byte{0x80, 0, 0, 1, 15} // exclusive on stream 1, weight 16
	raw := frame(-1, FrameHeaders, FlagEndStream|FlagPriority|FlagPadded, 3, append(append([]byte{2}, prio...), 'h', 0, 0)...)
	if st, err := a.Add(read(t, raw)); st != BlockOpen || err != nil {
		t.Fatal(st, err)
	}
	if id, open := a.Open(); !open || id != 3 {
		t.Fatalf("Open() = %d, %v", id, open)
	}
	raw[len(raw)-3] = 'X' // the caller reuses its read buffer: the block must not see it
	if st, err := a.Add(read(t, continuation(3, FlagEndHeaders, 'i'))); st != BlockDone || err != nil {
		t.Fatal(st, err)
	}
	b := a.Block()
	want := HeaderBlock{
		Start:       FrameHeader{Length: uint32(len(raw) - FrameHeaderLen), Type: FrameHeaders, Flags: FlagEndStream | FlagPriority | FlagPadded | FlagEndHeaders, StreamID: 3},
		Priority:    Priority{StreamDep: 1, Exclusive: true, Weight: 15},
		HasPriority: true, Fragment: []byte("hi"), Continuations: 1,
	}
	if b.Start != want.Start || b.Priority != want.Priority || b.HasPriority != want.HasPriority ||
		!bytes.Equal(b.Fragment, want.Fragment) || b.Continuations != want.Continuations {
		t.Errorf("Block() = %+v,\nwant      %+v", b, want)
	}
	if _, open := a.Open(); open {
		t.Error("still open after END_HEADERS")
	}

	// PUSH_PROMISE keeps its promised stream.
	if st, err := a.Add(read(t, frame(-1, FramePushPromise, FlagEndHeaders, 1, 0, 0, 0, 4, 'p'))); st != BlockDone || err != nil {
		t.Fatal(st, err)
	}
	if b := a.Block(); b.PromisedID != 4 || string(b.Fragment) != "p" || b.Start.Type != FramePushPromise {
		t.Errorf("push promise block %+v", b)
	}
}

func TestAssemblerSingleFrameZeroCopy(t *testing.T) {
	var a Assembler
	raw := headers(1, FlagEndHeaders|FlagEndStream, 0x82, 0x86, 0x84)
	if st, err := a.Add(read(t, raw)); st != BlockDone || err != nil {
		t.Fatal(st, err)
	}
	if frag := a.Block().Fragment; &frag[0] != &raw[FrameHeaderLen] {
		t.Error("single-frame block was copied")
	}
	if a.BufferCap() != 0 {
		t.Errorf("single-frame block grew the buffer to %d", a.BufferCap())
	}
}

// The single frame's ErrSelfDependency is a stream error: the block is
// still assembled, for the decoder to keep its table in step (§4.3).
func TestAssemblerStreamErrorFrame(t *testing.T) {
	var a Assembler
	raw := frame(-1, FrameHeaders, FlagPriority, 3, 0, 0, 0, 3, 0, 'a')
	f, _, err := ReadFrame(raw, DefaultMaxFrameSize)
	if err != ErrSelfDependency {
		t.Fatal(err)
	}
	if st, err := a.Add(&f); st != BlockOpen || err != nil {
		t.Fatal(st, err)
	}
	if st, err := a.Add(read(t, continuation(3, FlagEndHeaders, 'b'))); st != BlockDone || err != nil || string(a.Block().Fragment) != "ab" {
		t.Fatal(st, err, a.Block())
	}
}

// CVE-2024-27316: a client that sends CONTINUATION frames without end is
// cut off at the cap, and the buffer never grows past it.
func TestAssemblerContinuationFlood(t *testing.T) {
	chunk := bytes.Repeat([]byte{'x'}, 1000)
	t.Run("big frames", func(t *testing.T) {
		a := Assembler{MaxBlockSize: 10000, MaxContinuations: 1000}
		f := read(t, frame(-1, FrameContinuation, 0, 1, chunk...))
		if st, err := a.Add(read(t, headers(1, 0, chunk...))); st != BlockOpen || err != nil {
			t.Fatal(st, err)
		}
		n := 1
		var err error
		for ; n < 1000; n++ {
			if _, err = a.Add(f); err != nil {
				break
			}
			if a.BufferCap() > a.MaxBlockSize {
				t.Fatalf("buffer capacity %d past MaxBlockSize %d", a.BufferCap(), a.MaxBlockSize)
			}
		}
		if err != ErrBlockTooLarge || n != 10 {
			t.Fatalf("after %d frames: %v, want ErrBlockTooLarge after 10 (10000 bytes)", n, err)
		}
		if a.BufferCap() > a.MaxBlockSize {
			t.Errorf("buffer capacity %d past MaxBlockSize %d", a.BufferCap(), a.MaxBlockSize)
		}
	})
	t.Run("empty frames", func(t *testing.T) {
		var a Assembler
		f := read(t, continuation(1, 0))
		if _, err := a.Add(read(t, headers(1, 0))); err != nil {
			t.Fatal(err)
		}
		n := 0
		var err error
		for ; n < 1e6; n++ {
			if _, err = a.Add(f); err != nil {
				break
			}
		}
		if err != ErrTooManyContinuations || n != DefaultMaxContinuations {
			t.Fatalf("after %d frames: %v, want ErrTooManyContinuations after %d", n, err, DefaultMaxContinuations)
		}
		var e *Error
		if errors.As(err, &e); e.Code != ErrCodeEnhanceYourCalm || e.Stream {
			t.Errorf("%v: want a connection error ENHANCE_YOUR_CALM", err)
		}
	})
	t.Run("default cap", func(t *testing.T) {
		var a Assembler
		big := bytes.Repeat([]byte{'x'}, DefaultMaxFrameSize)
		f := read(t, frame(-1, FrameContinuation, 0, 1, big...))
		a.Add(read(t, headers(1, 0, big...)))
		var err error
		for n := 0; n < DefaultMaxContinuations && err == nil; n++ {
			_, err = a.Add(f)
		}
		if err != ErrBlockTooLarge || a.BufferCap() > DefaultMaxBlockSize {
			t.Fatalf("%v, buffer %d; want ErrBlockTooLarge with at most %d bytes", err, a.BufferCap(), DefaultMaxBlockSize)
		}
	})
	t.Run("one frame over the cap", func(t *testing.T) {
		a := Assembler{MaxBlockSize: 100}
		if _, err := a.Add(read(t, headers(1, FlagEndHeaders, chunk...))); err != ErrBlockTooLarge {
			t.Fatal(err)
		}
		if _, err := a.Add(read(t, headers(1, 0, chunk...))); err != ErrBlockTooLarge || a.BufferCap() != 0 {
			t.Fatal(err, a.BufferCap())
		}
	})
	t.Run("no continuations allowed", func(t *testing.T) {
		a := Assembler{MaxContinuations: -1}
		a.Add(read(t, headers(1, 0, 'a')))
		if _, err := a.Add(read(t, continuation(1, FlagEndHeaders))); err != ErrTooManyContinuations {
			t.Fatal(err)
		}
	})
	t.Run("exactly at the caps", func(t *testing.T) {
		a := Assembler{MaxBlockSize: 3000, MaxContinuations: 2}
		a.Add(read(t, headers(1, 0, chunk...)))
		a.Add(read(t, continuation(1, 0, chunk...)))
		if st, err := a.Add(read(t, continuation(1, FlagEndHeaders, chunk...))); st != BlockDone || err != nil || len(a.Block().Fragment) != 3000 {
			t.Fatal(st, err)
		}
	})
}

func TestAssemblerReset(t *testing.T) {
	var a Assembler
	a.Add(read(t, headers(1, 0, 'a')))
	a.Reset()
	if _, open := a.Open(); open {
		t.Fatal("open after Reset")
	}
	if a.BufferCap() == 0 {
		t.Error("Reset dropped the buffer")
	}
	if _, err := a.Add(read(t, continuation(1, FlagEndHeaders))); err != ErrUnexpectedContinuation {
		t.Fatal(err)
	}
	a.Add(read(t, headers(1, 0, 'a')))
	a.Release()
	if _, open := a.Open(); open || a.BufferCap() != 0 {
		t.Fatal("Release kept the block or the buffer")
	}
}

func TestAssemblerAllocs(t *testing.T) {
	single := read(t, headers(1, FlagEndHeaders|FlagEndStream, 0x82, 0x86, 0x84))
	var a Assembler
	allocs := testing.AllocsPerRun(100, func() {
		if st, err := a.Add(single); st != BlockDone || err != nil {
			t.Fatal(st, err)
		}
	})
	if allocs != 0 {
		t.Errorf("single-frame block allocates %v times, want 0", allocs)
	}
	frag := bytes.Repeat([]byte{'x'}, 4000)
	h := read(t, headers(1, 0, frag...))
	c := read(t, continuation(1, 0, frag...))
	end := read(t, continuation(1, FlagEndHeaders, frag...))
	multi := func() {
		a.Add(h)
		a.Add(c)
		if st, err := a.Add(end); st != BlockDone || err != nil || len(a.Block().Fragment) != 12000 {
			t.Fatal(st, err)
		}
	}
	multi() // warm: the buffer grows once
	if allocs := testing.AllocsPerRun(100, multi); allocs != 0 {
		t.Errorf("multi-frame block allocates %v times once warm, want 0", allocs)
	}
}
