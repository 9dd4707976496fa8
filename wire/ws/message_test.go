package ws

import "testing"

func hdr(op Opcode, fin bool, n int64) Header { return Header{Fin: fin, Opcode: op, Length: n} }

func TestAssemblerSequences(t *testing.T) {
	type step struct {
		h   Header
		op  Opcode // the message the payload belongs to
		err *Error
		in  bool // InMessage after the frame
	}
	tests := []struct {
		name  string
		max   int64
		steps []step
	}{
		{"single frames", 0, []step{
			{hdr(OpText, true, 5), OpText, nil, false},
			{hdr(OpBinary, true, 0), OpBinary, nil, false},
		}},
		{"fragmented, a ping and a pong between", 0, []step{
			{hdr(OpText, false, 3), OpText, nil, true},
			{hdr(OpPing, true, 5), OpPing, nil, true},
			{hdr(OpContinuation, false, 0), OpText, nil, true},
			{hdr(OpPong, true, 0), OpPong, nil, true},
			{hdr(OpContinuation, true, 2), OpText, nil, false},
			{hdr(OpBinary, true, 1), OpBinary, nil, false},
		}},
		{"close inside a message", 0, []step{
			{hdr(OpBinary, false, 3), OpBinary, nil, true},
			{hdr(OpClose, true, 2), OpClose, nil, true},
		}},
		{"continuation first", 0, []step{
			{hdr(OpContinuation, true, 3), 0, ErrUnexpectedContinuation, false},
		}},
		{"continuation after a whole message", 0, []step{
			{hdr(OpText, true, 3), OpText, nil, false},
			{hdr(OpContinuation, false, 3), 0, ErrUnexpectedContinuation, false},
		}},
		{"text inside a message", 0, []step{
			{hdr(OpText, false, 3), OpText, nil, true},
			{hdr(OpText, true, 3), 0, ErrMessageNotFinished, true},
		}},
		{"binary inside a text message", 0, []step{
			{hdr(OpText, false, 3), OpText, nil, true},
			{hdr(OpBinary, false, 3), 0, ErrMessageNotFinished, true},
		}},
		{"reserved opcode", 0, []step{
			{hdr(0xB, true, 0), 0, ErrReservedOpcode, false},
			{hdr(0x3, true, 0), 0, ErrReservedOpcode, false},
		}},
		{"message at its limit", 10, []step{
			{hdr(OpText, false, 4), OpText, nil, true},
			{hdr(OpContinuation, true, 6), OpText, nil, false},
		}},
		{"message over its limit", 10, []step{
			{hdr(OpText, false, 4), OpText, nil, true},
			{hdr(OpPing, true, 100), OpPing, nil, true}, // control frames do not count
			{hdr(OpContinuation, false, 6), OpText, nil, true},
			{hdr(OpContinuation, true, 1), 0, ErrMessageTooLarge, true},
		}},
		{"first frame over the limit", 10, []step{
			{hdr(OpBinary, true, 11), 0, ErrMessageTooLarge, false},
		}},
		{"no limit", -1, []step{
			{hdr(OpBinary, false, 1<<62), OpBinary, nil, true},
			{hdr(OpContinuation, true, 1<<62-1+1<<62), OpBinary, nil, false},
		}},
		{"no overflow past 2^63", -1, []step{
			{hdr(OpBinary, false, 1<<62), OpBinary, nil, true},
			{hdr(OpContinuation, false, 1<<62), OpBinary, nil, true},
		}},
	}
	for _, tt := range tests {
		a := Assembler{MaxMessage: tt.max}
		for i, s := range tt.steps {
			op, err := a.Frame(s.h)
			if op != s.op || err != errOrNil(s.err) || a.InMessage() != s.in {
				t.Errorf("%s, frame %d (%v): %v, %v, in message %v; want %v, %v, %v", tt.name, i, s.h.Opcode, op, err, a.InMessage(), s.op, s.err, s.in)
			}
		}
	}
	var a Assembler
	if _, err := a.Frame(hdr(OpText, false, DefaultMaxMessage)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Frame(hdr(OpContinuation, true, 1)); err != ErrMessageTooLarge {
		t.Errorf("past DefaultMaxMessage: %v", err)
	}
	if ErrMessageTooLarge.Code != CloseMessageTooBig || ErrUnexpectedContinuation.Code != CloseProtocolError {
		t.Error("message errors carry the wrong codes")
	}
}

func TestAssemblerCompressedAndSize(t *testing.T) {
	var a Assembler
	a.Frame(Header{Rsv1: true, Opcode: OpText, Length: 3})
	a.Frame(hdr(OpPing, true, 0))
	a.Frame(hdr(OpContinuation, true, 4))
	if !a.Compressed() || a.Size() != 7 || a.InMessage() {
		t.Errorf("after a compressed message of 7 bytes: compressed %v, size %d, in %v", a.Compressed(), a.Size(), a.InMessage())
	}
	a.Frame(hdr(OpBinary, true, 2))
	if a.Compressed() || a.Size() != 2 {
		t.Errorf("next message: compressed %v, size %d", a.Compressed(), a.Size())
	}
	a = Assembler{MaxMessage: 5}
	a.Frame(hdr(OpText, false, 1))
	a.Reset()
	if a.InMessage() || a.MaxMessage != 5 {
		t.Error("Reset kept the message or lost the limit")
	}
}
