package h2_test

import (
	"errors"
	"fmt"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// The connection state around the codec: a POST whose header block spans
// a HEADERS and a CONTINUATION frame, its body within the flow-control
// windows, a frame on the ended stream (a stream error), a GET, and a
// stream identifier only a server may use (a connection error).
func Example_connectionState() {
	in := postBytes()

	var asm h2.Assembler
	var dec h2.Decoder
	var streams h2.ServerStreams
	table := map[uint32]h2.StreamState{}
	var connIn h2.Inflow
	connIn.Init(h2.DefaultInitialWindowSize, false)
	streamIn := map[uint32]*h2.Inflow{}

	for len(in) > 0 {
		f, n, err := h2.ReadFrame(in, h2.DefaultMaxFrameSize)
		if err != nil {
			fmt.Println(err)
			return
		}
		in = in[n:]
		st, err := asm.Add(&f)
		if err != nil {
			fmt.Println("GOAWAY:", err)
			return
		}
		if st == h2.BlockOpen {
			fmt.Println("block continues on stream", f.StreamID)
			continue
		}
		hdr := f.FrameHeader
		if st == h2.BlockDone {
			blk := asm.Block()
			hdr = blk.Start
			fields, err := dec.AppendFields(nil, blk.Fragment) // always: the HPACK table
			if err != nil {
				fmt.Println("GOAWAY:", err)
				return
			}
			fmt.Printf("block on stream %d: %d fields from %d CONTINUATION frame(s)\n", hdr.StreamID, len(fields), blk.Continuations)
		}

		// The stream's state decides what the frame means.
		var next h2.StreamState
		if s, held := table[hdr.StreamID]; held {
			next, err = s.Recv(hdr.Type, hdr.Flags)
		} else {
			next, err = streams.RecvUntracked(hdr.StreamID, hdr.Type, hdr.Flags)
		}
		var e *h2.Error
		if errors.As(err, &e) && !e.Stream {
			fmt.Println("GOAWAY:", err)
			return
		}
		if hdr.Type == h2.FrameData {
			// DATA counts against the connection's window even when the
			// stream refuses it (§6.9).
			if err := connIn.Receive(hdr.Length); err != nil {
				fmt.Println("GOAWAY:", err)
				return
			}
			if err == nil && streamIn[hdr.StreamID] != nil {
				err = streamIn[hdr.StreamID].Receive(hdr.Length)
			}
			// The handler reads the body (or it is dropped): credit back.
			if inc := connIn.Release(hdr.Length); inc > 0 {
				fmt.Println("WINDOW_UPDATE 0", inc)
			}
		}
		if err != nil {
			fmt.Println("RST_STREAM:", err)
			next, _ = next.Send(h2.FrameRSTStream, 0)
		} else if hdr.Type == h2.FrameHeaders && next.Active() {
			in := new(h2.Inflow)
			in.Init(h2.DefaultInitialWindowSize, true)
			streamIn[hdr.StreamID] = in
		}
		fmt.Printf("%v on stream %d: %v\n", hdr.Type, hdr.StreamID, next)
		table[hdr.StreamID] = next
	}
	// Output:
	// block continues on stream 1
	// block on stream 1: 5 fields from 1 CONTINUATION frame(s)
	// HEADERS on stream 1: open
	// DATA on stream 1: open
	// DATA on stream 1: half-closed (remote)
	// RST_STREAM: h2: stream error STREAM_CLOSED: DATA or HEADERS on a stream the client half-closed with END_STREAM (§5.1)
	// DATA on stream 1: closed (reset by server)
	// block on stream 3: 4 fields from 0 CONTINUATION frame(s)
	// HEADERS on stream 3: half-closed (remote)
	// block on stream 2: 4 fields from 0 CONTINUATION frame(s)
	// GOAWAY: h2: connection error PROTOCOL_ERROR: client opened a stream with an even identifier (§5.1.1)
}

// postBytes is a client's POST, its header block split in two frames,
// then a frame on the stream it has ended, a GET, and a GET on a stream
// identifier a client must not use.
func postBytes() []byte {
	var enc h2.Encoder
	block := enc.StartBlock(nil)
	for _, kv := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", "example.com"}, {":path", "/upload"}, {"content-length", "11"}} {
		block = enc.AppendField(block, kv[0], kv[1])
	}
	half := len(block) / 2
	b := h2.AppendHeaders(nil, 1, 0, h2.Priority{}, block[:half], 0)
	b = h2.AppendContinuation(b, 1, h2.FlagEndHeaders, block[half:])
	b = h2.AppendData(b, 1, 0, []byte("hello"), 0)
	b = h2.AppendData(b, 1, h2.FlagEndStream, []byte(" world"), 0)
	b = h2.AppendData(b, 1, 0, []byte("more"), 0) // after END_STREAM
	get := func(b []byte, stream uint32) []byte {
		block := enc.StartBlock(nil)
		for _, kv := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "example.com"}, {":path", "/"}} {
			block = enc.AppendField(block, kv[0], kv[1])
		}
		return h2.AppendHeaders(b, stream, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, block, 0)
	}
	b = get(b, 3)
	return get(b, 2) // an even identifier: clients open odd streams
}
