package h2

import (
	"errors"
	"testing"
)

func TestWindowConsume(t *testing.T) {
	tests := []struct {
		name   string
		w      Window
		n      uint32
		err    error
		remain int64
	}{
		// §6.9.1: a frame may use the window exactly, not more.
		{"within", StreamWindow(100), 40, nil, 60},
		{"exactly", StreamWindow(100), 100, nil, 0},
		{"empty DATA on an empty window", StreamWindow(0), 0, nil, 0},
		{"past the stream window: stream error", StreamWindow(100), 101, ErrStreamFlowControl, 100},
		{"past the connection window: connection error", ConnWindow(100), 101, ErrConnFlowControl, 100},
		{"default connection window", ConnWindow(DefaultInitialWindowSize), DefaultInitialWindowSize + 1, ErrConnFlowControl, DefaultInitialWindowSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.w.Consume(tt.n); err != tt.err {
				t.Fatalf("Consume(%d) = %v, want %v", tt.n, err, tt.err)
			}
			if got := tt.w.Available(); got != tt.remain {
				t.Errorf("Available() = %d, want %d", got, tt.remain)
			}
		})
	}
}

func TestWindowAdd(t *testing.T) {
	tests := []struct {
		name   string
		w      Window
		inc    uint32
		err    error
		remain int64
	}{
		{"stream", StreamWindow(10), 5, nil, 15},
		{"to exactly 2^31-1 (§6.9.1)", StreamWindow(10), MaxWindowSize - 10, nil, MaxWindowSize},
		{"stream past 2^31-1: stream FLOW_CONTROL_ERROR (§6.9.1)", StreamWindow(10), MaxWindowSize - 9, ErrStreamWindowOverflow, 10},
		{"connection past 2^31-1: connection FLOW_CONTROL_ERROR (§6.9.1)", ConnWindow(DefaultInitialWindowSize), MaxWindowSize, ErrConnWindowOverflow, DefaultInitialWindowSize},
		{"zero on a stream: stream PROTOCOL_ERROR (§6.9)", StreamWindow(10), 0, ErrStreamIncrementZero, 10},
		{"zero on the connection: connection PROTOCOL_ERROR (§6.9)", ConnWindow(10), 0, ErrWindowIncrementZero, 10},
		{"a negative window recovers (§6.9.2)", Window{avail: -5, stream: true}, 6, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.w.Add(tt.inc); err != tt.err {
				t.Fatalf("Add(%d) = %v, want %v", tt.inc, err, tt.err)
			}
			if got := tt.w.Available(); got != tt.remain {
				t.Errorf("Available() = %d, want %d", got, tt.remain)
			}
		})
	}
	// The kinds: overflow is FLOW_CONTROL_ERROR, zero is PROTOCOL_ERROR,
	// each on the stream or the connection.
	for _, c := range []struct {
		err    *Error
		code   ErrCode
		stream bool
	}{
		{ErrStreamWindowOverflow, ErrCodeFlowControl, true},
		{ErrConnWindowOverflow, ErrCodeFlowControl, false},
		{ErrStreamFlowControl, ErrCodeFlowControl, true},
		{ErrConnFlowControl, ErrCodeFlowControl, false},
		{ErrInitialWindowOverflow, ErrCodeFlowControl, false},
	} {
		if c.err.Code != c.code || c.err.Stream != c.stream {
			t.Errorf("%v: want code %v, stream %v", c.err, c.code, c.stream)
		}
	}
}

// §6.9.2: a new SETTINGS_INITIAL_WINDOW_SIZE moves every stream's send
// window by the difference, possibly below zero; past 2^31-1 is a
// connection error; the connection window does not move.
func TestWindowApplyInitialSize(t *testing.T) {
	tests := []struct {
		name     string
		w        Window
		old, new uint32
		err      error
		remain   int64
	}{
		{"raise", StreamWindow(100), 100, 1000, nil, 1000},
		{"raise a partly used window", Window{avail: 40, stream: true}, 100, 1000, nil, 940},
		{"lower", StreamWindow(100), 100, 10, nil, 10},
		{"lower below zero", Window{avail: 3, stream: true}, 10, 2, nil, -5},
		{"to 0", StreamWindow(DefaultInitialWindowSize), DefaultInitialWindowSize, 0, nil, 0},
		{"to exactly 2^31-1", StreamWindow(DefaultInitialWindowSize), DefaultInitialWindowSize, MaxWindowSize, nil, MaxWindowSize},
		{"past 2^31-1 after WINDOW_UPDATEs", Window{avail: MaxWindowSize, stream: true}, DefaultInitialWindowSize, DefaultInitialWindowSize + 1, ErrInitialWindowOverflow, MaxWindowSize},
		{"connection window untouched", ConnWindow(DefaultInitialWindowSize), DefaultInitialWindowSize, 10, nil, DefaultInitialWindowSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.w.ApplyInitialSize(tt.old, tt.new); err != tt.err {
				t.Fatalf("ApplyInitialSize(%d, %d) = %v, want %v", tt.old, tt.new, err, tt.err)
			}
			if got := tt.w.Available(); got != tt.remain {
				t.Errorf("Available() = %d, want %d", got, tt.remain)
			}
		})
	}
	// A window made negative sends nothing until WINDOW_UPDATE lifts it.
	conn, st := ConnWindow(1000), Window{avail: -5, stream: true}
	if n := SendLimit(&conn, &st, DefaultMaxFrameSize, 100); n != 0 {
		t.Errorf("SendLimit on a negative window = %d", n)
	}
	st.Add(10)
	if n := SendLimit(&conn, &st, DefaultMaxFrameSize, 100); n != 5 {
		t.Errorf("SendLimit after WINDOW_UPDATE = %d, want 5", n)
	}
}

func TestSendLimit(t *testing.T) {
	tests := []struct {
		conn, stream int64
		maxFrame     uint32
		want, limit  int
	}{
		{1000, 1000, DefaultMaxFrameSize, 10, 10},
		{5, 1000, DefaultMaxFrameSize, 10, 5},
		{1000, 7, DefaultMaxFrameSize, 10, 7},
		{1 << 20, 1 << 20, DefaultMaxFrameSize, 1 << 20, DefaultMaxFrameSize},
		{0, 1000, DefaultMaxFrameSize, 10, 0},
		{1000, 1000, DefaultMaxFrameSize, 0, 0},
	}
	for _, tt := range tests {
		c, s := Window{avail: tt.conn}, Window{avail: tt.stream, stream: true}
		if got := SendLimit(&c, &s, tt.maxFrame, tt.want); got != tt.limit {
			t.Errorf("SendLimit(conn %d, stream %d, frame %d, want %d) = %d, want %d", tt.conn, tt.stream, tt.maxFrame, tt.want, got, tt.limit)
		}
	}
}

func TestInflowBatchesUpdates(t *testing.T) {
	var in Inflow
	in.Init(1000, true)
	var sent []uint32
	// Ten frames of 100 bytes, each read by the handler at once: credit
	// goes back in two updates of 500, not ten of 100.
	for i := 0; i < 10; i++ {
		if err := in.Receive(100); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if inc := in.Release(100); inc != 0 {
			sent = append(sent, inc)
		}
	}
	if len(sent) != 2 || sent[0] != 500 || sent[1] != 500 {
		t.Errorf("updates %v, want [500 500]", sent)
	}
	if in.Available() != 1000 {
		t.Errorf("Available() = %d, want the whole window back", in.Available())
	}

	// A handler that does not read: the peer fills the window and is
	// stopped (§6.9.1), no credit goes back.
	in.Init(1000, true)
	if err := in.Receive(1000); err != nil {
		t.Fatal(err)
	}
	if err := in.Receive(1); err != ErrStreamFlowControl {
		t.Fatalf("past the window: %v", err)
	}
	if inc := in.Release(499); inc != 0 {
		t.Errorf("under half released: update %d", inc)
	}
	if inc := in.Release(1); inc != 500 {
		t.Errorf("half released: update %d, want 500", inc)
	}

	// The connection's window: a connection error, and Grow raises it
	// from the fixed 65,535 at the start.
	var conn Inflow
	conn.Init(DefaultInitialWindowSize, false)
	if inc := conn.Grow(1 << 20); inc != 1<<20-DefaultInitialWindowSize {
		t.Errorf("Grow = %d", inc)
	}
	if conn.Available() != 1<<20 || conn.Size() != 1<<20 {
		t.Errorf("after Grow: available %d, size %d", conn.Available(), conn.Size())
	}
	if inc := conn.Grow(1000); inc != 0 || conn.Size() != 1<<20 {
		t.Errorf("Grow to a smaller size: %d, size %d", inc, conn.Size())
	}
	if err := conn.Receive(1<<20 + 1); err != ErrConnFlowControl {
		t.Errorf("past the connection window: %v", err)
	}
	// Grow pays what is owed along with the raise.
	conn.Receive(100)
	conn.Release(100)
	if inc := conn.Grow(1<<20 + 10); inc != 110 {
		t.Errorf("Grow with 100 owed = %d, want 110", inc)
	}
	// A tiny window still gets credit back.
	var tiny Inflow
	tiny.Init(1, true)
	tiny.Receive(1)
	if inc := tiny.Release(1); inc != 1 {
		t.Errorf("window of 1: update %d", inc)
	}
	if inc := tiny.Release(0); inc != 0 {
		t.Errorf("Release(0) = %d", inc)
	}
}

func TestInflowReleaseTooMuch(t *testing.T) {
	var in Inflow
	in.Init(100, true)
	in.Receive(10)
	defer func() {
		if recover() == nil {
			t.Error("releasing more than received did not panic")
		}
	}()
	in.Release(11)
}

// The window never passes 2^31-1, and neither does an update it asks for:
// the peer's window stays in range too (§6.9.1).
func TestInflowMaxWindow(t *testing.T) {
	var in Inflow
	in.Init(DefaultInitialWindowSize, false)
	inc := in.Grow(1<<32 - 1)
	if in.Size() != MaxWindowSize || int64(inc)+DefaultInitialWindowSize != MaxWindowSize {
		t.Fatalf("Grow(2^32-1): size %d, increment %d", in.Size(), inc)
	}
	peer := ConnWindow(DefaultInitialWindowSize)
	if err := peer.Add(inc); err != nil {
		t.Fatalf("the peer's window overflows: %v", err)
	}
	in.Receive(MaxWindowSize)
	peer.Consume(MaxWindowSize)
	if err := peer.Add(in.Release(MaxWindowSize)); err != nil || peer.Available() != MaxWindowSize {
		t.Fatalf("full release: %v, peer window %d", err, peer.Available())
	}
}

func TestFlowAllocs(t *testing.T) {
	var in Inflow
	in.Init(1<<20, true)
	conn, st := ConnWindow(1<<20), StreamWindow(1<<20)
	allocs := testing.AllocsPerRun(100, func() {
		if err := in.Receive(16384); err != nil {
			t.Fatal(err)
		}
		in.Release(16384)
		n := SendLimit(&conn, &st, DefaultMaxFrameSize, 1<<20)
		conn.Consume(uint32(n))
		st.Consume(uint32(n))
		conn.Add(uint32(n))
		st.Add(uint32(n))
		if err := st.Consume(1 << 30); !errors.Is(err, ErrStreamFlowControl) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("flow control allocates %v times, want 0", allocs)
	}
}
