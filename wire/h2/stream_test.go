package h2

import (
	"testing"
	"time"
)

const (
	idle = StateIdle
	open = StateOpen
	hcl  = StateHalfClosedLocal
	hcr  = StateHalfClosedRemote
	clsd = StateClosed
	rstl = StateResetLocal
	es   = FlagEndStream
)

// Every transition of RFC 9113 §5.1 a server meets on receiving a frame,
// and every error it must answer.
func TestStreamRecv(t *testing.T) {
	tests := []struct {
		from  StreamState
		typ   FrameType
		flags Flags
		to    StreamState
		err   error
		rule  string
	}{
		// idle
		{idle, FrameHeaders, FlagEndHeaders, open, nil, "§5.1 idle: receiving HEADERS opens"},
		{idle, FrameHeaders, es, hcr, nil, "§5.1 idle: HEADERS with END_STREAM, open then half-closed (remote)"},
		{idle, FramePriority, 0, idle, nil, "§5.1 idle: PRIORITY allowed, no change"},
		{idle, FrameData, 0, idle, ErrIdleStreamFrame, "§5.1 idle: other frames are a connection PROTOCOL_ERROR"},
		{idle, FrameData, es, idle, ErrIdleStreamFrame, "§5.1 idle"},
		{idle, FrameRSTStream, 0, idle, ErrIdleStreamFrame, "§5.1 idle, §6.4"},
		{idle, FrameWindowUpdate, 0, idle, ErrIdleStreamFrame, "§5.1 idle, §6.9"},
		{idle, FrameContinuation, 0, idle, ErrIdleStreamFrame, "§5.1 idle"},
		{idle, FramePushPromise, 0, idle, ErrClientPushPromise, "§8.4: a client cannot push"},
		{idle, 0xfa, 0, idle, nil, "§5.5: unknown frame types are ignored"},
		// open
		{open, FrameData, 0, open, nil, "§5.1 open: request body"},
		{open, FrameData, es, hcr, nil, "§5.1 open: END_STREAM half-closes (remote)"},
		{open, FrameHeaders, es, hcr, nil, "§8.1: trailers end the stream"},
		{open, FrameHeaders, 0, open, ErrTrailersNoEndStream, "§8.1: a second HEADERS must carry END_STREAM"},
		{open, FrameRSTStream, 0, clsd, nil, "§5.1 open: RST_STREAM closes"},
		{open, FrameWindowUpdate, 0, open, nil, "§5.1 open"},
		{open, FramePriority, 0, open, nil, "§5.1 open"},
		{open, FrameContinuation, 0, open, nil, "§6.10: judged with its HEADERS"},
		{open, FramePushPromise, 0, open, ErrClientPushPromise, "§8.4"},
		{open, 0xfa, 0, open, nil, "§5.5"},
		// half-closed (local): the server has ended its side
		{hcl, FrameData, 0, hcl, nil, "§5.1 half-closed (local): the client may still send"},
		{hcl, FrameData, es, clsd, nil, "§5.1 half-closed (local): END_STREAM closes"},
		{hcl, FrameHeaders, es, clsd, nil, "§5.1, §8.1: trailers close"},
		{hcl, FrameHeaders, 0, hcl, ErrTrailersNoEndStream, "§8.1"},
		{hcl, FrameRSTStream, 0, clsd, nil, "§5.1 half-closed (local): RST_STREAM closes"},
		{hcl, FrameWindowUpdate, 0, hcl, nil, "§5.1"},
		{hcl, FramePriority, 0, hcl, nil, "§5.1"},
		// half-closed (remote): the client has ended its side
		{hcr, FrameData, 0, hcr, ErrHalfClosedRemote, "§5.1 half-closed (remote): stream error STREAM_CLOSED"},
		{hcr, FrameData, es, hcr, ErrHalfClosedRemote, "§5.1 half-closed (remote)"},
		{hcr, FrameHeaders, es, hcr, ErrHalfClosedRemote, "§5.1 half-closed (remote)"},
		{hcr, FrameWindowUpdate, 0, hcr, nil, "§5.1 half-closed (remote): WINDOW_UPDATE allowed"},
		{hcr, FramePriority, 0, hcr, nil, "§5.1 half-closed (remote): PRIORITY allowed"},
		{hcr, FrameRSTStream, 0, clsd, nil, "§5.1 half-closed (remote): RST_STREAM closes"},
		{hcr, FramePushPromise, 0, hcr, ErrClientPushPromise, "§8.4"},
		// closed (END_STREAM both ways, reset by the client, or forgotten)
		{clsd, FramePriority, 0, clsd, nil, "§5.1 closed: PRIORITY allowed"},
		{clsd, FrameWindowUpdate, 0, clsd, nil, "§5.1 closed: WINDOW_UPDATE may cross END_STREAM"},
		{clsd, FrameRSTStream, 0, clsd, nil, "§5.1 closed: RST_STREAM may cross END_STREAM"},
		{clsd, FrameData, 0, clsd, ErrClosedStreamData, "§6.1: DATA outside open/half-closed (local) is STREAM_CLOSED"},
		{clsd, FrameHeaders, es, clsd, ErrClosedStreamHeaders, "§5.1 closed: connection error STREAM_CLOSED"},
		{clsd, FramePushPromise, 0, clsd, ErrClientPushPromise, "§8.4"},
		// closed by the server's RST_STREAM: in-flight frames are discarded
		{rstl, FrameData, 0, rstl, nil, "§5.1 closed: discard after sending RST_STREAM"},
		{rstl, FrameData, es, rstl, nil, "§5.1 closed"},
		{rstl, FrameHeaders, es, rstl, nil, "§5.1 closed: (the block is still decoded)"},
		{rstl, FrameWindowUpdate, 0, rstl, nil, "§5.1 closed"},
		{rstl, FrameRSTStream, 0, rstl, nil, "§5.1 closed; §5.4.2: never answer RST_STREAM with RST_STREAM"},
		{rstl, FramePriority, 0, rstl, nil, "§5.1 closed"},
	}
	for _, tt := range tests {
		to, err := tt.from.Recv(tt.typ, tt.flags)
		if to != tt.to || err != tt.err {
			t.Errorf("%s: %v + recv %v (flags %#x) = %v, %v; want %v, %v", tt.rule, tt.from, tt.typ, tt.flags, to, err, tt.to, tt.err)
		}
	}
	// The kinds the RFC names.
	for _, c := range []struct {
		err    *Error
		code   ErrCode
		stream bool
	}{
		{ErrIdleStreamFrame, ErrCodeProtocol, false},
		{ErrClientPushPromise, ErrCodeProtocol, false},
		{ErrTrailersNoEndStream, ErrCodeProtocol, true},
		{ErrHalfClosedRemote, ErrCodeStreamClosed, true},
		{ErrClosedStreamData, ErrCodeStreamClosed, true},
		{ErrClosedStreamHeaders, ErrCodeStreamClosed, false},
		{ErrEvenStreamID, ErrCodeProtocol, false},
		{ErrStreamIDOrder, ErrCodeProtocol, false},
		{ErrRefusedStream, ErrCodeRefusedStream, true},
		{ErrRapidReset, ErrCodeEnhanceYourCalm, false},
	} {
		if c.err.Code != c.code || c.err.Stream != c.stream {
			t.Errorf("%v: want code %v, stream error %v", c.err, c.code, c.stream)
		}
	}
}

func TestStreamSend(t *testing.T) {
	tests := []struct {
		from  StreamState
		typ   FrameType
		flags Flags
		to    StreamState
		ok    bool
		rule  string
	}{
		{open, FrameHeaders, 0, open, true, "§5.1 open: response headers"},
		{open, FrameData, 0, open, true, "§5.1 open"},
		{open, FrameData, es, hcl, true, "§5.1 open: sending END_STREAM half-closes (local)"},
		{open, FrameHeaders, es, hcl, true, "§5.1 open"},
		{hcr, FrameHeaders, 0, hcr, true, "§5.1 half-closed (remote): the response"},
		{hcr, FrameData, es, clsd, true, "§5.1 half-closed (remote): END_STREAM closes"},
		{hcr, FrameHeaders, es, clsd, true, "§5.1 half-closed (remote): trailers close"},
		{hcl, FrameData, 0, hcl, false, "§5.1 half-closed (local): the server sent its END_STREAM"},
		{clsd, FrameData, 0, clsd, false, "§5.1 closed: nothing but PRIORITY"},
		{idle, FrameHeaders, 0, idle, false, "a server opens no streams (no push)"},
		{open, FrameRSTStream, 0, rstl, true, "§5.1: sending RST_STREAM closes"},
		{hcl, FrameRSTStream, 0, rstl, true, "§5.1"},
		{hcr, FrameRSTStream, 0, rstl, true, "§5.1"},
		{clsd, FrameRSTStream, 0, rstl, true, "§5.4.2: answering a stream error on a closed stream"},
		{idle, FrameRSTStream, 0, idle, false, "§6.4: RST_STREAM on an idle stream is the peer's PROTOCOL_ERROR"},
		{rstl, FrameRSTStream, 0, rstl, false, "no second reset"},
		{open, FrameWindowUpdate, 0, open, true, "§5.1"},
		{hcl, FrameWindowUpdate, 0, hcl, true, "§5.1: credit for the request body"},
		{clsd, FrameWindowUpdate, 0, clsd, false, "§5.1 closed"},
		{idle, FrameWindowUpdate, 0, idle, false, "§5.1 idle"},
		{idle, FramePriority, 0, idle, true, "§5.1: PRIORITY in any state"},
		{open, FramePushPromise, 0, open, false, "this server does not push"},
		{hcl, FrameContinuation, 0, hcl, true, "§6.10: after its HEADERS"},
	}
	for _, tt := range tests {
		to, ok := tt.from.Send(tt.typ, tt.flags)
		if to != tt.to || ok != tt.ok {
			t.Errorf("%s: %v + send %v (flags %#x) = %v, %v; want %v, %v", tt.rule, tt.from, tt.typ, tt.flags, to, ok, tt.to, tt.ok)
		}
	}
}

// One request's life, both directions, through every state.
func TestStreamLifecycle(t *testing.T) {
	s := idle
	step := func(next StreamState, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	stepSend := func(next StreamState, ok bool) {
		t.Helper()
		if !ok {
			t.Fatalf("send refused in %v", s)
		}
		s = next
	}
	step(s.Recv(FrameHeaders, FlagEndHeaders)) // POST headers
	step(s.Recv(FrameData, 0))                 // body
	stepSend(s.Send(FrameHeaders, 0))          // early response
	stepSend(s.Send(FrameData, es))            // response done
	if s != hcl {
		t.Fatalf("after the response: %v", s)
	}
	step(s.Recv(FrameData, es)) // the rest of the body
	if s != clsd || s.Active() {
		t.Fatalf("end: %v, active %v", s, s.Active())
	}
}

func TestServerStreamIDs(t *testing.T) {
	var s ServerStreams
	tests := []struct {
		id   uint32
		err  error
		last uint32
		rule string
	}{
		{1, nil, 1, "§5.1.1: odd, first"},
		{5, nil, 5, "§5.1.1: gaps allowed"},
		{3, ErrStreamIDOrder, 5, "§5.1.1: lower than a previous stream"},
		{5, ErrStreamIDOrder, 5, "§5.1.1: reused"},
		{6, ErrEvenStreamID, 5, "§5.1.1: client streams are odd"},
		{7, nil, 7, "§5.1.1"},
		{1<<31 - 1, nil, 1<<31 - 1, "§5.1.1: the largest identifier"},
	}
	for _, tt := range tests {
		if err := s.Open(tt.id); err != tt.err || s.Last() != tt.last {
			t.Errorf("%s: Open(%d) = %v, last %d; want %v, last %d", tt.rule, tt.id, err, s.Last(), tt.err, tt.last)
		}
	}
	if s.Active() != 4 {
		t.Errorf("Active() = %d, want 4", s.Active())
	}
	// §5.1.1: a new identifier closes the idle streams below it.
	for id, want := range map[uint32]StreamState{3: clsd, 5: clsd, 1<<31 - 1: clsd, 2: idle, 4: idle} {
		if got := s.Untracked(id); got != want {
			t.Errorf("Untracked(%d) = %v, want %v", id, got, want)
		}
	}
}

func TestServerStreamsConcurrency(t *testing.T) {
	s := ServerStreams{MaxConcurrent: 2}
	if s.Open(1) != nil || s.Open(3) != nil {
		t.Fatal("under the limit")
	}
	// §5.1.2: over the limit, REFUSED_STREAM; the identifier is spent.
	if err := s.Open(5); err != ErrRefusedStream || s.Last() != 5 || s.Active() != 2 {
		t.Fatalf("Open(5) = %v, last %d, active %d", err, s.Last(), s.Active())
	}
	if err := s.Open(5); err != ErrStreamIDOrder {
		t.Fatalf("a refused identifier reused: %v", err)
	}
	s.Done()
	if err := s.Open(7); err != nil || s.Active() != 2 {
		t.Fatalf("after Done: %v, active %d", err, s.Active())
	}
	// The default limit.
	var d ServerStreams
	for i := uint32(0); i < DefaultMaxConcurrentStreams; i++ {
		if err := d.Open(2*i + 1); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	if err := d.Open(2*DefaultMaxConcurrentStreams + 1); err != ErrRefusedStream {
		t.Fatalf("past the default: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Done without a stream did not panic")
		}
	}()
	var e ServerStreams
	e.Done()
}

// The sequences h2spec's §5.1 and §5.1.1 cases send, through a
// connection's lookup: held streams by their state, others by
// RecvUntracked.
func TestServerStreamsRecv(t *testing.T) {
	type frame struct {
		id    uint32
		typ   FrameType
		flags Flags
	}
	tests := []struct {
		name   string
		frames []frame
		err    error // from the last frame
	}{
		{"idle: DATA", []frame{{1, FrameData, es}}, ErrIdleStreamFrame},
		{"idle: RST_STREAM", []frame{{1, FrameRSTStream, 0}}, ErrIdleStreamFrame},
		{"idle: WINDOW_UPDATE", []frame{{1, FrameWindowUpdate, 0}}, ErrIdleStreamFrame},
		{"idle: CONTINUATION", []frame{{1, FrameContinuation, FlagEndHeaders}}, ErrIdleStreamFrame},
		{"idle: PRIORITY", []frame{{3, FramePriority, 0}}, nil},
		{"idle even: PRIORITY", []frame{{2, FramePriority, 0}}, nil},
		{"half-closed (remote): DATA", []frame{{1, FrameHeaders, es}, {1, FrameData, es}}, ErrHalfClosedRemote},
		{"half-closed (remote): HEADERS", []frame{{1, FrameHeaders, es}, {1, FrameHeaders, es}}, ErrHalfClosedRemote},
		{"closed: DATA after the client's RST_STREAM", []frame{{1, FrameHeaders, 0}, {1, FrameRSTStream, 0}, {1, FrameData, es}}, ErrClosedStreamData},
		{"closed: HEADERS after the client's RST_STREAM", []frame{{1, FrameHeaders, 0}, {1, FrameRSTStream, 0}, {1, FrameHeaders, es}}, ErrClosedStreamHeaders},
		{"5.1.1: even identifier", []frame{{2, FrameHeaders, es}}, ErrEvenStreamID},
		{"5.1.1: smaller than previous", []frame{{5, FrameHeaders, es}, {3, FrameHeaders, es}}, ErrStreamIDOrder},
		{"idle above the last: WINDOW_UPDATE", []frame{{1, FrameHeaders, es}, {3, FrameWindowUpdate, 0}}, ErrIdleStreamFrame},
		{"implicitly closed: DATA", []frame{{5, FrameHeaders, es}, {3, FrameData, 0}}, ErrClosedStreamData},
		{"implicitly closed: WINDOW_UPDATE ignored", []frame{{5, FrameHeaders, es}, {3, FrameWindowUpdate, 0}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s ServerStreams
			table := map[uint32]StreamState{}
			var err error
			for i, f := range tt.frames {
				var next StreamState
				if st, held := table[f.id]; held {
					next, err = st.Recv(f.typ, f.flags)
				} else {
					next, err = s.RecvUntracked(f.id, f.typ, f.flags)
				}
				if err != nil {
					if i != len(tt.frames)-1 {
						t.Fatalf("frame %d: %v", i, err)
					}
					break
				}
				if next != idle {
					table[f.id] = next
				}
			}
			if err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestResetCounter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := ResetCounter{Max: 3, Period: time.Second}
	for i := 0; i < 3; i++ {
		if err := c.Count(t0.Add(time.Duration(i) * time.Millisecond)); err != nil {
			t.Fatalf("reset %d: %v", i, err)
		}
	}
	// The fourth in the same second: rapid reset.
	if err := c.Count(t0.Add(500 * time.Millisecond)); err != ErrRapidReset {
		t.Fatalf("4th reset in a second: %v", err)
	}
	// A new period starts over.
	if err := c.Count(t0.Add(time.Second)); err != nil {
		t.Fatalf("next period: %v", err)
	}
	// A clock that steps back starts over too, rather than counting forever.
	if err := c.Count(t0); err != nil {
		t.Fatalf("clock stepped back: %v", err)
	}

	// The attack: a client that opens and resets streams as fast as it
	// can is stopped after the default budget, while a client that cancels
	// a few streams a second never is.
	var d ResetCounter
	n := 0
	for ; n < 1e6; n++ {
		if d.Count(t0.Add(time.Duration(n)*time.Microsecond)) != nil {
			break
		}
	}
	if n != DefaultMaxResets {
		t.Errorf("rapid reset stopped after %d resets, want %d", n, DefaultMaxResets)
	}
	var polite ResetCounter
	for i := 0; i < 10000; i++ { // 50 per second for 200 seconds
		if err := polite.Count(t0.Add(time.Duration(i) * 20 * time.Millisecond)); err != nil {
			t.Fatalf("cancel %d at 50/s: %v", i, err)
		}
	}
}

func TestStreamAllocs(t *testing.T) {
	var s ServerStreams
	var c ResetCounter
	now := time.Now()
	id := uint32(1)
	allocs := testing.AllocsPerRun(100, func() {
		st, err := s.RecvUntracked(id, FrameHeaders, FlagEndHeaders)
		if err != nil {
			t.Fatal(err)
		}
		st, _ = st.Recv(FrameData, es)
		st, _ = st.Send(FrameData, es)
		if st != clsd {
			t.Fatal(st)
		}
		s.Done()
		if _, err := st.Recv(FrameData, 0); err != ErrClosedStreamData {
			t.Fatal(err)
		}
		c.Count(now)
		id += 2
	})
	if allocs != 0 {
		t.Errorf("stream state allocates %v times per request, want 0", allocs)
	}
}

// frameOf reads back the one frame in b.
func frameOf(t *testing.T, b []byte) *Frame {
	t.Helper()
	f, _, err := ReadFrame(b, DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	return &f
}

func TestFloodCounter(t *testing.T) {
	var ping [8]byte
	idle := map[string][]byte{
		"PING":              AppendPing(nil, 0, ping),
		"SETTINGS":          AppendSettings(nil),
		"PRIORITY":          AppendPriority(nil, 3, Priority{StreamDep: 1, Weight: 15}),
		"empty DATA":        AppendData(nil, 1, 0, nil, 0),
		"padding-only DATA": AppendData(nil, 1, 0, nil, 10),
	}
	busy := map[string][]byte{
		"PING ACK":          AppendPing(nil, FlagAck, ping),
		"SETTINGS ACK":      AppendSettingsAck(nil),
		"DATA":              AppendData(nil, 1, 0, []byte("x"), 0),
		"empty DATA ending": AppendData(nil, 1, FlagEndStream, nil, 0),
		"WINDOW_UPDATE":     AppendWindowUpdate(nil, 1, 1), // the caller judges these (Add)
		"RST_STREAM":        AppendRSTStream(nil, 1, ErrCodeCancel),
		"GOAWAY":            AppendGoAway(nil, 0, ErrCodeNo, nil),
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, b := range idle {
		f := frameOf(t, b)
		if !Idle(f) {
			t.Errorf("%s: not counted as idle", name)
		}
		// The flood: as fast as a client can send them, one per
		// microsecond, it ends after the default budget.
		var c FloodCounter
		n := 0
		for ; n < 1e6; n++ {
			now := t0.Add(time.Duration(n) * time.Microsecond)
			if err := c.Count(f, func() time.Time { return now }); err != nil {
				if err != ErrFrameFlood {
					t.Fatalf("%s: %v", name, err)
				}
				break
			}
		}
		if n != DefaultMaxIdleFrames {
			t.Errorf("%s flood stopped after %d frames, want %d", name, n, DefaultMaxIdleFrames)
		}
		// A client that sends 50 a second for 200 seconds never is.
		var polite FloodCounter
		for i := range 10000 {
			now := t0.Add(time.Duration(i) * 20 * time.Millisecond)
			if err := polite.Count(f, func() time.Time { return now }); err != nil {
				t.Fatalf("%s: frame %d at 50/s: %v", name, i, err)
			}
		}
	}
	// Add counts what the caller judged idle, against the same budget.
	var c FloodCounter
	for i := range DefaultMaxIdleFrames {
		if err := c.Add(t0); err != nil {
			t.Fatalf("Add %d: %v", i, err)
		}
	}
	if err := c.Count(frameOf(t, idle["PING"]), func() time.Time { return t0 }); err != ErrFrameFlood {
		t.Fatalf("a PING after %d added idle frames: %v, want ErrFrameFlood", DefaultMaxIdleFrames, err)
	}
	for name, b := range busy {
		f := frameOf(t, b)
		var c FloodCounter
		for range 2 * DefaultMaxIdleFrames {
			if err := c.Count(f, func() time.Time { t.Fatalf("%s: clock read for a frame that is not idle", name); return t0 }); err != nil {
				t.Fatalf("%s counted as idle: %v", name, err)
			}
		}
	}
}
