package h2

import "testing"

// Steady state allocates nothing: the per-request work of a connection
// with warm tables and grown buffers.

func TestReadFrameAllocs(t *testing.T) {
	in := framesIn()
	allocs := testing.AllocsPerRun(100, func() {
		for p := in; len(p) > 0; {
			f, n, err := ReadFrame(p, DefaultMaxFrameSize)
			if err != nil || len(f.Payload) == 0 {
				t.Fatal(err)
			}
			p = p[n:]
		}
	})
	if allocs != 0 {
		t.Errorf("ReadFrame allocates %v times per HEADERS + DATA, want 0", allocs)
	}
}

func TestDecodeAllocs(t *testing.T) {
	first, second := warmBlock()
	var d Decoder
	fs, err := d.AppendFields(nil, first)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ = d.AppendFields(fs[:0], second)
	allocs := testing.AllocsPerRun(100, func() {
		if fs, err = d.AppendFields(fs[:0], second); err != nil || len(fs) != len(requestFields) {
			t.Fatal(len(fs), err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendFields allocates %v times per request block, want 0", allocs)
	}
	n := 0
	emit := func(Field) { n++ }
	allocs = testing.AllocsPerRun(100, func() {
		if err := d.Decode(second, emit); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times per request block, want 0", allocs)
	}
	// A cold block, with Huffman literals and insertions, into a decoder
	// whose table and buffers have grown: the table wraps, nothing new.
	allocs = testing.AllocsPerRun(100, func() {
		if fs, err = d.AppendFields(fs[:0], first); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendFields allocates %v times per cold request block, want 0", allocs)
	}
}

func TestEncodeAllocs(t *testing.T) {
	var e Encoder
	var buf []byte
	encode := func() {
		buf = e.StartBlock(buf[:0])
		for _, f := range responseFields {
			buf = e.AppendField(buf, f[0], f[1])
		}
		for _, f := range requestFields { // names off the static table, long values
			buf = e.AppendFieldBytes(buf, []byte(f[0]), []byte(f[1]))
		}
	}
	encode()
	if allocs := testing.AllocsPerRun(100, encode); allocs != 0 {
		t.Errorf("encoding a block allocates %v times, want 0", allocs)
	}
}

func TestValidateAllocs(t *testing.T) {
	_, second := warmBlock()
	var d Decoder
	first, _ := warmBlock()
	d.AppendFields(nil, first)
	fs, _ := d.AppendFields(nil, second)
	var v RequestValidator
	upper := Field{Name: []byte("Upper"), Value: []byte("x")}
	allocs := testing.AllocsPerRun(100, func() {
		v.Reset(false)
		for i := range fs {
			if err := v.Field(fs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := v.End(); err != nil {
			t.Fatal(err)
		}
		if err := v.Field(upper); err != ErrUppercaseName {
			t.Fatal(err) // an error costs nothing either
		}
	})
	if allocs != 0 {
		t.Errorf("validating a request allocates %v times, want 0", allocs)
	}
}

func TestAppendFrameAllocs(t *testing.T) {
	buf := make([]byte, 0, 1<<16)
	data := make([]byte, 1000)
	allocs := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		b = AppendHeaderBlock(b, 1, false, data[:100], DefaultMaxFrameSize)
		b = AppendData(b, 1, FlagEndStream, data, 0)
		b = AppendSettings(b, Setting{SettingMaxConcurrentStreams, 100}, Setting{SettingInitialWindowSize, 1 << 20})
		b = AppendWindowUpdate(b, 0, 1<<20)
		b = AppendPing(b, FlagAck, [8]byte{})
		_ = AppendRSTStream(b, 3, ErrCodeCancel)
	})
	if allocs != 0 {
		t.Errorf("appending frames allocates %v times, want 0", allocs)
	}
}
