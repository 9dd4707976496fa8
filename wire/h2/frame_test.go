package h2

import (
	"bytes"
	"errors"
	"testing"
)

// frame builds a raw frame: header fields and payload.
func frame(length int, t FrameType, flags Flags, stream uint32, payload ...byte) []byte {
	if length < 0 {
		length = len(payload)
	}
	b := AppendFrameHeader(nil, FrameHeader{Length: uint32(length), Type: t, Flags: flags, StreamID: stream})
	return append(b, payload...)
}

func TestReadFrameRules(t *testing.T) {
	prio := func(dep uint32, w byte) []byte {
		return []byte{byte(dep >> 24), byte(dep >> 16), byte(dep >> 8), byte(dep), w}
	}
	setting := func(id SettingID, v uint32) []byte {
		return []byte{byte(id >> 8), byte(id), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	}
	tests := []struct {
		name string
		raw  []byte
		err  error // nil: valid
	}{
		// §4.1, §4.2
		{"short header", []byte{0, 0, 0, 0}, ErrNeedMore},
		{"short payload", frame(4, FrameData, 0, 1, 'a'), ErrNeedMore},
		{"over max frame size", frame(DefaultMaxFrameSize+1, FrameData, 0, 1), ErrFrameTooLarge},
		{"unknown type ignored", frame(-1, 0xfa, 0xff, 0, 1, 2, 3), nil},
		{"reserved bit dropped", []byte{0, 0, 0, 0, 0, 0x80, 0, 0, 1}, nil},
		// §6.1 DATA
		{"data", frame(-1, FrameData, FlagEndStream, 1, 'h', 'i'), nil},
		{"data stream 0", frame(-1, FrameData, 0, 0, 'h'), ErrStreamIDZero},
		{"data padded", frame(-1, FrameData, FlagPadded, 1, 2, 'h', 0, 0), nil},
		{"data padding = payload-1", frame(-1, FrameData, FlagPadded, 1, 3, 0, 0, 0), nil},
		{"data padding = payload", frame(-1, FrameData, FlagPadded, 1, 4, 0, 0, 0), ErrPadding},
		{"data padded empty", frame(-1, FrameData, FlagPadded, 1), ErrShortData},
		// §6.2 HEADERS
		{"headers", frame(-1, FrameHeaders, FlagEndHeaders, 1, 0x82), nil},
		{"headers stream 0", frame(-1, FrameHeaders, FlagEndHeaders, 0, 0x82), ErrStreamIDZero},
		{"headers priority", frame(-1, FrameHeaders, FlagPriority, 3, append(prio(1, 15), 0x82)...), nil},
		{"headers priority short", frame(-1, FrameHeaders, FlagPriority, 3, 0, 0, 0, 1), ErrShortHeaders},
		{"headers padded+priority short", frame(-1, FrameHeaders, FlagPriority|FlagPadded, 3, 0, 0, 0, 0, 1), ErrShortHeaders},
		{"headers padding eats priority", frame(-1, FrameHeaders, FlagPriority|FlagPadded, 3, append([]byte{1}, prio(1, 1)...)...), ErrPadding},
		{"headers padding exact", frame(-1, FrameHeaders, FlagPriority|FlagPadded, 3, append(append([]byte{1}, prio(1, 1)...), 0)...), nil},
		{"headers padding too long", frame(-1, FrameHeaders, FlagPadded, 3, 3, 0x82, 0), ErrPadding},
		{"headers self-dependency", frame(-1, FrameHeaders, FlagPriority, 3, prio(3, 0)...), ErrSelfDependency},
		// §6.3 PRIORITY
		{"priority", frame(-1, FramePriority, 0, 3, prio(1, 0)...), nil},
		{"priority stream 0", frame(-1, FramePriority, 0, 0, prio(1, 0)...), ErrStreamIDZero},
		{"priority length 4", frame(-1, FramePriority, 0, 3, 0, 0, 0, 1), ErrPriorityLength},
		{"priority self", frame(-1, FramePriority, 0, 3, prio(3|1<<31, 0)...), ErrSelfDependency},
		// §6.4 RST_STREAM
		{"rst", frame(-1, FrameRSTStream, 0, 1, 0, 0, 0, 8), nil},
		{"rst stream 0", frame(-1, FrameRSTStream, 0, 0, 0, 0, 0, 8), ErrStreamIDZero},
		{"rst length 3", frame(-1, FrameRSTStream, 0, 1, 0, 0, 8), ErrRSTStreamLength},
		// §6.5 SETTINGS
		{"settings", frame(-1, FrameSettings, 0, 0, setting(SettingMaxFrameSize, 1<<20)...), nil},
		{"settings empty", frame(-1, FrameSettings, 0, 0), nil},
		{"settings ack", frame(-1, FrameSettings, FlagAck, 0), nil},
		{"settings ack with payload", frame(-1, FrameSettings, FlagAck, 0, setting(1, 1)...), ErrSettingsAckLength},
		{"settings stream 1", frame(-1, FrameSettings, 0, 1), ErrStreamIDNotZero},
		{"settings length 5", frame(-1, FrameSettings, 0, 0, 0, 1, 0, 0, 0), ErrSettingsLength},
		{"enable push 1", frame(-1, FrameSettings, 0, 0, setting(SettingEnablePush, 1)...), nil},
		{"enable push 2", frame(-1, FrameSettings, 0, 0, setting(SettingEnablePush, 2)...), ErrSettingsEnablePush},
		{"window 2^31-1", frame(-1, FrameSettings, 0, 0, setting(SettingInitialWindowSize, 1<<31-1)...), nil},
		{"window 2^31", frame(-1, FrameSettings, 0, 0, setting(SettingInitialWindowSize, 1<<31)...), ErrSettingsWindowSize},
		{"max frame 16383", frame(-1, FrameSettings, 0, 0, setting(SettingMaxFrameSize, 16383)...), ErrSettingsMaxFrameSize},
		{"max frame 16384", frame(-1, FrameSettings, 0, 0, setting(SettingMaxFrameSize, 16384)...), nil},
		{"max frame 2^24-1", frame(-1, FrameSettings, 0, 0, setting(SettingMaxFrameSize, 1<<24-1)...), nil},
		{"max frame 2^24", frame(-1, FrameSettings, 0, 0, setting(SettingMaxFrameSize, 1<<24)...), ErrSettingsMaxFrameSize},
		{"connect protocol 2", frame(-1, FrameSettings, 0, 0, setting(SettingEnableConnectProtocol, 2)...), ErrSettingsConnectProto},
		{"unknown setting", frame(-1, FrameSettings, 0, 0, setting(0xff, 1<<32-1)...), nil},
		// §6.6 PUSH_PROMISE
		{"push promise", frame(-1, FramePushPromise, FlagEndHeaders, 1, 0, 0, 0, 2, 0x82), nil},
		{"push promise stream 0", frame(-1, FramePushPromise, FlagEndHeaders, 0, 0, 0, 0, 2), ErrStreamIDZero},
		{"push promise short", frame(-1, FramePushPromise, 0, 1, 0, 0, 2), ErrShortPushPromise},
		{"push promise padding eats id", frame(-1, FramePushPromise, FlagPadded, 1, 1, 0, 0, 2, 0), ErrPadding},
		// §6.7 PING
		{"ping", frame(-1, FramePing, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8), nil},
		{"ping stream 1", frame(-1, FramePing, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8), ErrStreamIDNotZero},
		{"ping length 7", frame(-1, FramePing, 0, 0, 1, 2, 3, 4, 5, 6, 7), ErrPingLength},
		// §6.8 GOAWAY
		{"goaway", frame(-1, FrameGoAway, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1, 'x'), nil},
		{"goaway stream 1", frame(-1, FrameGoAway, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1), ErrStreamIDNotZero},
		{"goaway length 7", frame(-1, FrameGoAway, 0, 0, 0, 0, 0, 5, 0, 0, 0), ErrGoAwayLength},
		// §6.9 WINDOW_UPDATE
		{"window update", frame(-1, FrameWindowUpdate, 0, 0, 0, 0, 0, 1), nil},
		{"window update stream", frame(-1, FrameWindowUpdate, 0, 7, 0x7f, 0xff, 0xff, 0xff), nil},
		{"window update 0 conn", frame(-1, FrameWindowUpdate, 0, 0, 0, 0, 0, 0), ErrWindowIncrementZero},
		{"window update 0 stream", frame(-1, FrameWindowUpdate, 0, 7, 0x80, 0, 0, 0), ErrStreamIncrementZero},
		{"window update length 5", frame(-1, FrameWindowUpdate, 0, 0, 0, 0, 0, 0, 1), ErrWindowUpdateLength},
		// §6.10 CONTINUATION
		{"continuation", frame(-1, FrameContinuation, FlagEndHeaders, 1, 0x82), nil},
		{"continuation stream 0", frame(-1, FrameContinuation, FlagEndHeaders, 0, 0x82), ErrStreamIDZero},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bytes.Clone(tt.raw)
			if tt.err != ErrNeedMore {
				in = append(in, "next"...) // a following frame must not be read
			}
			f, n, err := ReadFrame(in, DefaultMaxFrameSize)
			if err != tt.err {
				t.Fatalf("ReadFrame = %v, want %v", err, tt.err)
			}
			var e *Error
			switch {
			case err == nil || errors.As(err, &e) && e.Stream:
				if n != len(tt.raw) {
					t.Fatalf("n = %d, want %d", n, len(tt.raw))
				}
				if !bytes.Equal(f.Payload, tt.raw[FrameHeaderLen:]) {
					t.Fatalf("payload %x, want %x", f.Payload, tt.raw[FrameHeaderLen:])
				}
			default:
				if n != 0 {
					t.Fatalf("n = %d on %v, want 0", n, err)
				}
			}
			if e != nil && e.Reason == "" {
				t.Fatal("empty reason")
			}
		})
	}
}

func TestFrameAccessors(t *testing.T) {
	var b []byte
	b = AppendData(b, 1, FlagEndStream|FlagPadded, []byte("hello"), 3)
	b = AppendHeaders(b, 3, FlagEndHeaders|FlagPriority|FlagPadded, Priority{StreamDep: 1, Exclusive: true, Weight: 200}, []byte{0x82, 0x86}, 2)
	b = AppendPriority(b, 5, Priority{StreamDep: 3, Weight: 7})
	b = AppendRSTStream(b, 5, ErrCodeCancel)
	b = AppendSettings(b, Setting{SettingMaxFrameSize, 1 << 20}, Setting{SettingEnablePush, 0})
	b = AppendSettingsAck(b)
	b = AppendPushPromise(b, 1, FlagEndHeaders, 2, []byte{0x84}, 0)
	b = AppendPing(b, FlagAck, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	b = AppendGoAway(b, 7, ErrCodeEnhanceYourCalm, []byte("calm"))
	b = AppendWindowUpdate(b, 0, 1<<20)
	b = AppendContinuation(b, 3, FlagEndHeaders, []byte{0x87})

	next := func() Frame {
		t.Helper()
		f, n, err := ReadFrame(b, DefaultMaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		b = b[n:]
		return f
	}
	if f := next(); string(f.Data()) != "hello" || f.PadLength() != 3 || f.Length != 9 || !f.Flags.Has(FlagEndStream) {
		t.Errorf("DATA: %+v %q", f, f.Data())
	}
	f := next()
	if p, ok := f.Priority(); !ok || p != (Priority{1, true, 200}) || !bytes.Equal(f.BlockFragment(), []byte{0x82, 0x86}) || f.PadLength() != 2 {
		t.Errorf("HEADERS: %+v %v", f, p)
	}
	f = next()
	if p, ok := f.Priority(); !ok || p != (Priority{3, false, 7}) {
		t.Errorf("PRIORITY: %v", p)
	}
	if f := next(); f.ErrCode() != ErrCodeCancel || f.StreamID != 5 {
		t.Errorf("RST_STREAM: %+v", f)
	}
	if f := next(); f.NumSettings() != 2 || f.Setting(0) != (Setting{SettingMaxFrameSize, 1 << 20}) || f.Setting(1) != (Setting{SettingEnablePush, 0}) {
		t.Errorf("SETTINGS: %+v", f)
	}
	if f := next(); !f.Flags.Has(FlagAck) || f.NumSettings() != 0 {
		t.Errorf("SETTINGS ACK: %+v", f)
	}
	if f := next(); f.PromisedID() != 2 || !bytes.Equal(f.BlockFragment(), []byte{0x84}) {
		t.Errorf("PUSH_PROMISE: %+v", f)
	}
	if f := next(); f.PingData() != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} || !f.Flags.Has(FlagAck) {
		t.Errorf("PING: %+v", f)
	}
	if f := next(); f.LastStreamID() != 7 || f.ErrCode() != ErrCodeEnhanceYourCalm || string(f.DebugData()) != "calm" {
		t.Errorf("GOAWAY: %+v", f)
	}
	if f := next(); f.Increment() != 1<<20 || f.StreamID != 0 {
		t.Errorf("WINDOW_UPDATE: %+v", f)
	}
	if f := next(); !bytes.Equal(f.BlockFragment(), []byte{0x87}) {
		t.Errorf("CONTINUATION: %+v", f)
	}
	if len(b) != 0 {
		t.Errorf("%d bytes left", len(b))
	}
}

func TestAppendHeaderBlockSplits(t *testing.T) {
	block := bytes.Repeat([]byte{0xbe}, 2*DefaultMaxFrameSize+5)
	b := AppendHeaderBlock(nil, 9, true, block, DefaultMaxFrameSize)
	var got []byte
	var types []FrameType
	var last Flags
	for len(b) > 0 {
		f, n, err := ReadFrame(b, DefaultMaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f.BlockFragment()...)
		types = append(types, f.Type)
		last = f.Flags
		if f.Type == FrameHeaders && !f.Flags.Has(FlagEndStream) {
			t.Error("HEADERS without END_STREAM")
		}
		b = b[n:]
	}
	if !bytes.Equal(got, block) || len(types) != 3 || types[0] != FrameHeaders || types[2] != FrameContinuation || !last.Has(FlagEndHeaders) {
		t.Fatalf("frames %v, last flags %v", types, last)
	}
}

func TestNames(t *testing.T) {
	if ErrCodeFlowControl.String() != "FLOW_CONTROL_ERROR" || ErrCode(0xee).String() != "UNKNOWN_ERROR_0xee" {
		t.Error(ErrCodeFlowControl, ErrCode(0xee))
	}
	if FrameWindowUpdate.String() != "WINDOW_UPDATE" || FrameType(0x20).String() != "UNKNOWN" {
		t.Error(FrameWindowUpdate, FrameType(0x20))
	}
	if SettingMaxHeaderListSize.String() != "MAX_HEADER_LIST_SIZE" || SettingID(7).String() != "UNKNOWN_SETTING_0x7" {
		t.Error(SettingMaxHeaderListSize, SettingID(7))
	}
	if got := ErrSettingsWindowSize.Error(); got != "h2: connection error FLOW_CONTROL_ERROR: SETTINGS_INITIAL_WINDOW_SIZE exceeds 2^31-1 (§6.5.2)" {
		t.Error(got)
	}
	if got := ErrBadTE.Error(); got != `h2: stream error PROTOCOL_ERROR: TE field with a value other than "trailers" (§8.2.2)` {
		t.Error(got)
	}
	if len(ClientPreface) != 24 {
		t.Error("preface length")
	}
}

func TestReadFrameLimits(t *testing.T) {
	big := AppendData(nil, 1, 0, make([]byte, 100000), 0)
	if _, _, err := ReadFrame(big, DefaultMaxFrameSize); err != ErrFrameTooLarge {
		t.Fatalf("100,000-byte DATA at the default limit: %v", err)
	}
	if f, n, err := ReadFrame(big, 1<<17); err != nil || n != len(big) || len(f.Data()) != 100000 {
		t.Fatalf("100,000-byte DATA at a 128 KiB limit: %d, %v", n, err)
	}
	// Too large is known from the header alone: no need to wait for the
	// payload (§4.2).
	if _, _, err := ReadFrame(big[:FrameHeaderLen], DefaultMaxFrameSize); err != ErrFrameTooLarge {
		t.Fatalf("header of an oversized frame: %v", err)
	}
	// Every endpoint accepts 16,384 bytes, whatever limit it is given.
	full := AppendData(nil, 1, 0, make([]byte, DefaultMaxFrameSize), 0)
	if _, _, err := ReadFrame(full, 0); err != nil {
		t.Fatalf("16,384-byte DATA with limit 0: %v", err)
	}
	if _, _, err := ReadFrame(AppendFrameHeader(nil, FrameHeader{Length: MaxFrameSizeLimit, Type: FrameData, StreamID: 1}), MaxFrameSizeLimit); err != ErrNeedMore {
		t.Fatalf("largest frame's header: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("AppendFrameHeader of a 2^24-byte payload did not panic")
		}
	}()
	AppendFrameHeader(nil, FrameHeader{Length: MaxFrameSizeLimit + 1})
}

// A stream error leaves the frame usable: the caller resets the stream
// and reads on; a HEADERS frame's block is there to decode.
func TestStreamErrorKeepsFrame(t *testing.T) {
	b := AppendHeaders(nil, 3, FlagEndHeaders|FlagPriority, Priority{StreamDep: 3}, []byte{0x82}, 0)
	b = AppendPing(b, 0, [8]byte{})
	f, n, err := ReadFrame(b, 0)
	if err != ErrSelfDependency || f.StreamID != 3 || !bytes.Equal(f.BlockFragment(), []byte{0x82}) {
		t.Fatalf("%v, %+v", err, f)
	}
	if f, _, err := ReadFrame(b[n:], 0); err != nil || f.Type != FramePing {
		t.Fatalf("next frame: %v, %v", f.Type, err)
	}
}
