package h2

import "testing"

// readOne reads the one frame in b.
func readOne(t testing.TB, b []byte) Frame {
	t.Helper()
	f, n, err := ReadFrame(b, DefaultMaxFrameSize)
	if err != nil || n != len(b) {
		t.Fatalf("ReadFrame: %v (%d of %d bytes)", err, n, len(b))
	}
	return f
}

func settingsFrame(t testing.TB, ss ...Setting) Frame {
	return readOne(t, AppendSettings(nil, ss...))
}

// windows lists the windows of ws, as a connection gathers its streams'.
func windows(ws []Window) []*Window {
	out := make([]*Window, len(ws))
	for i := range ws {
		out[i] = &ws[i]
	}
	return out
}

func TestClientStreamsIDs(t *testing.T) {
	var s ClientStreams
	for want := uint32(1); want <= 7; want += 2 {
		if !s.Reserve(10) {
			t.Fatalf("Reserve refused stream %d", want)
		}
		if id := s.Open(); id != want {
			t.Fatalf("Open = %d, want %d (odd, each above the last: §5.1.1)", id, want)
		}
	}
	if s.Active() != 4 {
		t.Fatalf("Active = %d, want 4", s.Active())
	}
	// Untracked: below the next identifier, odd: closed; the rest idle.
	for id, want := range map[uint32]StreamState{1: StateClosed, 7: StateClosed, 9: StateIdle, 2: StateIdle, 100: StateIdle, 101: StateIdle} {
		if got := s.Untracked(id); got != want {
			t.Errorf("Untracked(%d) = %v, want %v", id, got, want)
		}
	}
	s.Done(3)
	s.Done(1)
	if s.Active() != 2 {
		t.Fatalf("Active after two Done = %d, want 2", s.Active())
	}
}

func TestClientStreamsLimit(t *testing.T) {
	var s ClientStreams
	if s.Reserve(0) {
		t.Fatal("Reserve(0) took a slot: a client that waits for the server's SETTINGS opens nothing")
	}
	for range 2 {
		if !s.Reserve(2) {
			t.Fatal("Reserve refused a slot under the limit")
		}
	}
	if s.Reserve(2) {
		t.Fatal("Reserve took a third slot under a limit of 2 (§5.1.2)")
	}
	// A reservation given back without opening frees its slot and
	// uses no identifier.
	s.Done(0)
	if !s.Reserve(2) {
		t.Fatal("Reserve refused the slot Done(0) gave back")
	}
	if id := s.Open(); id != 1 {
		t.Fatalf("Open after Done(0) = %d, want 1", id)
	}
	s.Clear()
	if s.Active() != 0 {
		t.Fatal("Clear left slots taken")
	}
}

func TestClientStreamsSpent(t *testing.T) {
	var s ClientStreams
	s.StartAt(MaxStreamID - 2)
	// Two identifiers left: MaxStreamID-2 and MaxStreamID.
	for range 2 {
		if !s.Reserve(10) {
			t.Fatal("Reserve refused while identifiers are left")
		}
	}
	if s.Reserve(10) {
		t.Fatal("Reserve took a slot no identifier is left for")
	}
	if !s.Spent() {
		t.Fatal("Spent = false with every identifier reserved")
	}
	if a, b := s.Open(), s.Open(); a != MaxStreamID-2 || b != MaxStreamID {
		t.Fatalf("Open = %d, %d, want %d, %d", a, b, MaxStreamID-2, MaxStreamID)
	}
	if !s.Spent() || s.Reserve(10) {
		t.Fatal("a connection past the last identifier took a stream (§5.1.1)")
	}
}

func TestClientStreamsGoAway(t *testing.T) {
	var s ClientStreams
	for range 5 {
		s.Reserve(10)
		s.Open() // 1, 3, 5, 7, 9
	}
	if s.Unprocessed(9) || s.GoingAway() {
		t.Fatal("a stream unprocessed before any GOAWAY")
	}
	if last := s.GoAway(5); last != 5 {
		t.Fatalf("GoAway(5) = %d", last)
	}
	if s.Reserve(10) {
		t.Fatal("Reserve after GOAWAY (§6.8: no new streams)")
	}
	for id, want := range map[uint32]bool{1: false, 5: false, 7: true, 9: true} {
		if got := s.Unprocessed(id); got != want {
			t.Errorf("Unprocessed(%d) = %v, want %v", id, got, want)
		}
	}
	// A second GOAWAY may lower the last stream, never raise it.
	if last := s.GoAway(7); last != 5 || !s.Unprocessed(7) {
		t.Errorf("a GOAWAY raising the last stream to 7: last %d, stream 7 unprocessed %v; want 5, true", last, s.Unprocessed(7))
	}
	if last := s.GoAway(1); last != 1 || !s.Unprocessed(3) {
		t.Errorf("a GOAWAY lowering the last stream to 1: last %d, stream 3 unprocessed %v; want 1, true", last, s.Unprocessed(3))
	}
}

func TestClientStreamsRecvUntracked(t *testing.T) {
	var s ClientStreams
	s.Reserve(10)
	s.Open() // 1
	tests := []struct {
		id   uint32
		t    FrameType
		want error
	}{
		{1, FrameData, nil}, // closed and forgotten: late frames dropped (§5.1)
		{1, FrameHeaders, nil},
		{1, FrameRSTStream, nil},
		{1, FrameWindowUpdate, nil},
		{3, FrameData, ErrUnopenedStream}, // not opened yet
		{3, FrameHeaders, ErrUnopenedStream},
		{3, FrameRSTStream, ErrUnopenedStream},
		{3, FrameWindowUpdate, ErrUnopenedStream},
		{3, FramePriority, nil},              // allowed on idle streams (§5.1)
		{2, FrameHeaders, ErrUnopenedStream}, // even: a push, which is off
		{2, FrameType(0x20), nil},            // unknown types are ignored (§5.5)
	}
	for _, tt := range tests {
		if err := s.RecvUntracked(tt.id, tt.t); err != tt.want {
			t.Errorf("RecvUntracked(%d, %v) = %v, want %v", tt.id, tt.t, err, tt.want)
		}
	}
	if e := ErrUnopenedStream; e.Stream || e.Code != ErrCodeProtocol {
		t.Errorf("ErrUnopenedStream is %+v, want a connection error PROTOCOL_ERROR", e)
	}
}

func TestPeerSettingsApply(t *testing.T) {
	p := NewPeerSettings(100, 1000)
	if p.MaxConcurrentStreams != 100 || p.InitialWindowSize != DefaultInitialWindowSize ||
		p.MaxFrameSize != DefaultMaxFrameSize || p.HeaderTableSize != DefaultMaxTableSize || p.MaxHeaderListSize != 0 || p.Received() {
		t.Fatalf("NewPeerSettings: %+v", p)
	}
	// The first SETTINGS without MAX_CONCURRENT_STREAMS: the cap for
	// "no limit".
	f := settingsFrame(t, Setting{SettingMaxFrameSize, 1 << 20}, Setting{SettingMaxHeaderListSize, 8192})
	if err := p.Apply(&f, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !p.Received() || p.MaxConcurrentStreams != 1000 || p.MaxFrameSize != 1<<20 || p.MaxHeaderListSize != 8192 {
		t.Fatalf("after the first SETTINGS: %+v", p)
	}
	f = settingsFrame(t, Setting{SettingMaxConcurrentStreams, 7})
	if err := p.Apply(&f, nil, nil); err != nil || p.MaxConcurrentStreams != 7 {
		t.Fatalf("MAX_CONCURRENT_STREAMS 7: %v, %+v", err, p)
	}
	// Later SETTINGS without it leave it as it is.
	f = settingsFrame(t, Setting{SettingMaxFrameSize, 1 << 14})
	if err := p.Apply(&f, nil, nil); err != nil || p.MaxConcurrentStreams != 7 {
		t.Fatalf("later SETTINGS: %v, %+v", err, p)
	}
	// No limit, uncapped: 2^32-1.
	q := NewPeerSettings(0, 0)
	f = settingsFrame(t)
	if err := q.Apply(&f, nil, nil); err != nil || q.MaxConcurrentStreams != 1<<32-1 {
		t.Fatalf("empty first SETTINGS with noLimit 0: %v, %+v", err, q)
	}
	// An ACK changes nothing.
	f = readOne(t, AppendSettingsAck(nil))
	before := q
	if err := q.Apply(&f, nil, nil); err != nil || q != before {
		t.Fatalf("SETTINGS ACK changed the settings: %+v -> %+v", before, q)
	}
}

// TestPeerSettingsEnablePush: a server may not enable push (§6.5.2): 1
// is a connection PROTOCOL_ERROR that applies nothing; 0 is allowed.
func TestPeerSettingsEnablePush(t *testing.T) {
	p := NewPeerSettings(100, 0)
	f := settingsFrame(t, Setting{SettingMaxConcurrentStreams, 7}, Setting{SettingEnablePush, 1})
	err := p.Apply(&f, nil, nil)
	if err != ErrServerEnablePush || ErrServerEnablePush.Stream || ErrServerEnablePush.Code != ErrCodeProtocol {
		t.Fatalf("ENABLE_PUSH 1: %v, want ErrServerEnablePush (a connection PROTOCOL_ERROR)", err)
	}
	if p.Received() || p.MaxConcurrentStreams != 100 {
		t.Fatalf("a refused frame applied something: %+v", p)
	}
	f = settingsFrame(t, Setting{SettingMaxConcurrentStreams, 7}, Setting{SettingEnablePush, 0})
	if err := p.Apply(&f, nil, nil); err != nil || p.MaxConcurrentStreams != 7 {
		t.Fatalf("ENABLE_PUSH 0: %v, %+v", err, p)
	}
}

func TestPeerSettingsHeaderTableSize(t *testing.T) {
	p := NewPeerSettings(100, 0)
	var enc Encoder
	enc.StartBlock(nil)
	f := settingsFrame(t, Setting{SettingHeaderTableSize, 0})
	if err := p.Apply(&f, &enc, nil); err != nil || p.HeaderTableSize != 0 {
		t.Fatalf("HEADER_TABLE_SIZE 0: %v, %+v", err, p)
	}
	// The encoder announces it in its next block (RFC 7541 §4.2).
	if b := enc.StartBlock(nil); len(b) != 1 || b[0] != 0x20 {
		t.Fatalf("the next block starts % x, want a size update to 0 (20)", b)
	}
	// With no encoder (blocks without a dynamic table), recorded only.
	f = settingsFrame(t, Setting{SettingHeaderTableSize, 100})
	if err := p.Apply(&f, nil, nil); err != nil || p.HeaderTableSize != 100 {
		t.Fatalf("HEADER_TABLE_SIZE 100, no encoder: %v, %+v", err, p)
	}
}

// TestPeerSettingsInitialWindow: §6.9.2, every open stream's send window
// moves by the change, down below zero or up, and a window past 2^31-1 is
// a connection error FLOW_CONTROL_ERROR that applies nothing.
func TestPeerSettingsInitialWindow(t *testing.T) {
	p := NewPeerSettings(100, 0)
	ws := []Window{StreamWindow(DefaultInitialWindowSize), StreamWindow(DefaultInitialWindowSize)}
	ws[0].Consume(60000) // 5,535 left
	f := settingsFrame(t, Setting{SettingInitialWindowSize, 1000})
	if err := p.Apply(&f, nil, windows(ws)); err != nil {
		t.Fatal(err)
	}
	if ws[0].Available() != 5535-64535 || ws[1].Available() != 1000 || p.InitialWindowSize != 1000 {
		t.Fatalf("shrunk to 1000: windows %d, %d (want %d, 1000), setting %d", ws[0].Available(), ws[1].Available(), 5535-64535, p.InitialWindowSize)
	}
	f = settingsFrame(t, Setting{SettingInitialWindowSize, 70000})
	if err := p.Apply(&f, nil, windows(ws)); err != nil {
		t.Fatal(err)
	}
	if ws[0].Available() != 5535+4465 || ws[1].Available() != 70000 {
		t.Fatalf("grown to 70000: windows %d, %d", ws[0].Available(), ws[1].Available())
	}
	// Overflow: a stream credited up to the limit cannot grow.
	ws[1].Add(MaxWindowSize - 70000)
	f = settingsFrame(t, Setting{SettingMaxFrameSize, 1 << 15}, Setting{SettingInitialWindowSize, 70001})
	err := p.Apply(&f, nil, windows(ws))
	if err != ErrInitialWindowOverflow || ErrInitialWindowOverflow.Stream || ErrInitialWindowOverflow.Code != ErrCodeFlowControl {
		t.Fatalf("a window taken past 2^31-1: %v, want ErrInitialWindowOverflow (a connection FLOW_CONTROL_ERROR)", err)
	}
	if ws[0].Available() != 10000 || ws[1].Available() != MaxWindowSize || p.InitialWindowSize != 70000 || p.MaxFrameSize != DefaultMaxFrameSize {
		t.Fatalf("a refused frame applied something: windows %d, %d; %+v", ws[0].Available(), ws[1].Available(), p)
	}
	// Two values in one frame: the last one counts, once.
	f = settingsFrame(t, Setting{SettingInitialWindowSize, 0}, Setting{SettingInitialWindowSize, 70000 - 5})
	if err := p.Apply(&f, nil, windows(ws)); err != nil || ws[0].Available() != 9995 {
		t.Fatalf("two values: %v, window %d, want 9995", err, ws[0].Available())
	}
}

func TestPeerSettingsPreface(t *testing.T) {
	p := NewPeerSettings(100, 0)
	ping := readOne(t, AppendPing(nil, 0, [8]byte{}))
	ack := readOne(t, AppendSettingsAck(nil))
	settings := settingsFrame(t)
	if p.CheckPreface(&ping) != ErrServerPreface || p.CheckPreface(&ack) != ErrServerPreface {
		t.Fatal("a PING or a SETTINGS ACK passed as the server's preface (§3.4)")
	}
	if err := p.CheckPreface(&settings); err != nil {
		t.Fatal(err)
	}
	p.Apply(&settings, nil, nil)
	if err := p.CheckPreface(&ping); err != nil {
		t.Fatalf("a PING after the server's SETTINGS: %v", err)
	}
}

func TestClientStateAllocs(t *testing.T) {
	var s ClientStreams
	p := NewPeerSettings(100, 0)
	ws := make([]Window, 10)
	seq := windows(ws)
	f := settingsFrame(t, Setting{SettingInitialWindowSize, 1 << 20}, Setting{SettingMaxConcurrentStreams, 100})
	var enc Encoder
	allocs := testing.AllocsPerRun(100, func() {
		if !s.Reserve(p.MaxConcurrentStreams) {
			t.Fatal("no room")
		}
		id := s.Open()
		if s.RecvUntracked(id, FrameData) != nil || s.Unprocessed(id) {
			t.Fatal("stream state")
		}
		s.Done(id)
		p.InitialWindowSize = DefaultInitialWindowSize
		if err := p.Apply(&f, &enc, seq); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a stream's reserve, open and close and a SETTINGS frame allocate %v times, want 0", allocs)
	}
}

// TestClientStreamsClear: after a connection failed (Clear), the holders
// of the slots it forgot may still open them or give them back without a
// panic, and no new slot is taken.
func TestClientStreamsClear(t *testing.T) {
	var s ClientStreams
	for range 2 {
		if !s.Reserve(10) {
			t.Fatal("Reserve refused on an empty connection")
		}
	}
	id := s.Open()
	s.Clear()
	s.Done(id) // the open stream's holder
	s.Done(0)  // the reservation's holder
	s.Open()   // a reservation's holder that had not seen the failure
	if s.Active() != 0 {
		t.Errorf("Active %d after Clear and the holders' Done, want 0", s.Active())
	}
	if s.Reserve(10) {
		t.Error("Reserve took a slot on a cleared (failed) connection")
	}
}
