package h2

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fieldsString(fs []Field) string {
	var sb strings.Builder
	for _, f := range fs {
		sb.WriteString(string(f.Name) + ": " + string(f.Value))
		if f.Sensitive {
			sb.WriteString(" (never indexed)")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// RFC 7541 Appendix C.3 and C.4: three requests on one connection, without
// and with Huffman coding; the dynamic table carries over between them.
func TestDecodeRFC7541Examples(t *testing.T) {
	want := []string{
		":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\n",
		":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\ncache-control: no-cache\n",
		":method: GET\n:scheme: https\n:path: /index.html\n:authority: www.example.com\ncustom-key: custom-value\n",
	}
	wantSize := []uint32{57, 110, 164}
	for _, blocks := range [][]string{
		{ // C.3
			"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
			"8286 84be 5808 6e6f 2d63 6163 6865",
			"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
		},
		{ // C.4
			"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
			"8286 84be 5886 a8eb 1064 9cbf",
			"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
		},
	} {
		var d Decoder
		for i, h := range blocks {
			fs, err := d.AppendFields(nil, unhex(t, h))
			if err != nil {
				t.Fatalf("block %d: %v", i, err)
			}
			if got := fieldsString(fs); got != want[i] {
				t.Errorf("block %d:\n%s\nwant\n%s", i, got, want[i])
			}
			if size, _ := d.TableSize(); size != wantSize[i] {
				t.Errorf("block %d: table size %d, want %d", i, size, wantSize[i])
			}
		}
	}
}

// RFC 7541 Appendix C.2: the four kinds of representation.
func TestDecodeRepresentations(t *testing.T) {
	for _, tt := range []struct{ block, want string }{
		{"400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572", "custom-key: custom-header\n"}, // C.2.1
		{"040c 2f73 616d 706c 652f 7061 7468", ":path: /sample/path\n"},                                     // C.2.2
		{"1008 7061 7373 776f 7264 0673 6563 7265 74", "password: secret (never indexed)\n"},                // C.2.3
		{"82", ":method: GET\n"}, // C.2.4
	} {
		var d Decoder
		fs, err := d.AppendFields(nil, unhex(t, tt.block))
		if err != nil || fieldsString(fs) != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.block, fieldsString(fs), err, tt.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*Decoder)
		block string
		err   error
	}{
		{"index 0 (§6.1)", nil, "80", ErrHPACKIndex},
		{"index past the static table (§2.3.3)", nil, "be", ErrHPACKIndex},
		{"name index past the tables", nil, "7f00 0161", ErrHPACKIndex},
		{"size update above the limit (§6.3)", nil, "3fe2 1f", ErrTableSizeUpdate},
		{"size update at the limit", nil, "3fe1 1f82", nil},
		{"size update after a field (§4.2)", nil, "8220", ErrLateSizeUpdate},
		{"two size updates first", nil, "2020 82", nil},
		{"missing size update after a lower limit (§4.2)", func(d *Decoder) { d.SetMaxTableSize(100) }, "82", ErrMissingSizeUpdate},
		{"size update after a lower limit", func(d *Decoder) { d.SetMaxTableSize(100) }, "3f45 82", nil},
		{"size update above a lower limit", func(d *Decoder) { d.SetMaxTableSize(100) }, "3f46 82", ErrTableSizeUpdate},
		{"raised limit needs no update", func(d *Decoder) { d.SetMaxTableSize(8192) }, "82", nil},
		{"truncated name", nil, "40", ErrHPACKTruncated},
		{"truncated value", nil, "4001 6185 61", ErrHPACKTruncated},
		{"truncated integer", nil, "ff", ErrHPACKTruncated},
		{"integer overflow (§5.1)", nil, "ffff ffff ffff ffff ffff ff01", ErrHPACKInteger},
		{"Huffman padding not ones (§5.2)", nil, "4081 0000", errHuffman},
		{"Huffman padding over 7 bits (§5.2)", nil, "4082 1fff 00", errHuffman},
		{"Huffman EOS (§5.2)", nil, "4084 ffff ffff 00", errHuffman},
		{"string over MaxStringLength", func(d *Decoder) { d.MaxStringLength = 3 }, "0004 6162 6364 00", ErrStringTooLong},
		{"Huffman string over MaxStringLength once decoded", func(d *Decoder) { d.MaxStringLength = 3 }, "0083 1863 1f00", ErrStringTooLong}, // "abcde" is 3 bytes coded
		{"header list over the limit", func(d *Decoder) { d.MaxHeaderListSize = 40 }, "8282", ErrHeaderListTooLarge},
		{"empty block", nil, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			if tt.setup != nil {
				tt.setup(&d)
			}
			_, err := d.AppendFields(nil, unhex(t, tt.block))
			if err != tt.err {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
		})
	}
}

// TestHPACKBomb sends what HPACK bombs send: one large table entry, then
// a block of one-byte references to it, or of two-byte literals that copy
// its name into the table again and again. A block a little over the
// limit is read to the end (the table stays in step) and fails the
// stream; one far over it fails the connection, having copied nothing
// past the limit.
func TestHPACKBomb(t *testing.T) {
	big := strings.Repeat("x", 4000)
	for _, tt := range []struct {
		name string
		op   []byte // one field of the bomb
	}{
		{"indexed", []byte{0xbe}},            // the entry, whole
		{"indexed name", []byte{0x7e, 0x00}}, // a literal with its name, indexed: copies 4 KB per 2 bytes
		{"indexed name, no indexing", []byte{0x0f, 0x2f, 0x00}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			var e Encoder
			block := e.StartBlock(nil)
			block = e.AppendField(block, big, "v")
			if fs, err := d.AppendFields(nil, block); err != nil || len(fs) != 1 {
				t.Fatalf("%d fields, %v", len(fs), err)
			}
			per := 4000 + 1 + 32
			if tt.op[0] != 0xbe {
				per = 4000 + 32
			}
			// Just over the limit: a stream error, and the table in step.
			n := 0
			over := bytes.Repeat(tt.op, DefaultMaxHeaderListSize/per+1)
			if err := d.Decode(over, func(Field) { n++ }); err != ErrHeaderListTooLarge {
				t.Fatalf("just over: %v", err)
			}
			if n != DefaultMaxHeaderListSize/per {
				t.Errorf("emitted %d fields", n)
			}
			fs, err := d.AppendFields(nil, []byte{0xbe})
			if err != nil || len(fs) != 1 || len(fs[0].Name) != 4000 {
				t.Fatalf("after the block: %v", err)
			}
			// Far over: the connection ends.
			bomb := bytes.Repeat(tt.op, 100000)
			if err := d.Decode(bomb, func(Field) {}); err != ErrHPACKBomb {
				t.Fatalf("bomb: %v", err)
			}
			if cap(d.arena) > 2*DefaultMaxHeaderListSize {
				t.Errorf("arena grew to %d bytes", cap(d.arena))
			}
		})
	}
}

// Fields stay valid until the next call even when the table changes under
// them within the block.
func TestDecodeFieldsStableWithinBlock(t *testing.T) {
	var e Encoder
	e.SetMaxTableSize(100)
	var d Decoder
	d.SetMaxTableSize(100)
	var block []byte
	block = e.StartBlock(block)
	for i := range 20 {
		block = e.AppendField(block, "x-k", strings.Repeat(string(rune('a'+i)), 40))
		block = e.AppendField(block, "x-k", strings.Repeat(string(rune('a'+i)), 40)) // indexed, then evicted
	}
	fs, err := d.AppendFields(nil, block)
	if err != nil || len(fs) != 40 {
		t.Fatalf("%d fields, %v", len(fs), err)
	}
	for i, f := range fs {
		if want := strings.Repeat(string(rune('a'+i/2)), 40); string(f.Value) != want {
			t.Fatalf("field %d = %q, want %q", i, f.Value, want)
		}
	}
}

func TestEncoderSizeUpdates(t *testing.T) {
	var e Encoder
	if b := e.StartBlock(nil); len(b) != 0 {
		t.Fatalf("first block starts with %x", b)
	}
	e.SetMaxTableSize(0)
	e.SetMaxTableSize(1000)
	// The smallest size since the last block, then the final one (§4.2).
	if b := e.StartBlock(nil); !bytes.Equal(b, unhex(t, "20 3fc9 07")) {
		t.Fatalf("got %x", b)
	}
	if b := e.StartBlock(nil); len(b) != 0 {
		t.Fatalf("second block starts with %x", b)
	}
	e.SetMaxTableSize(1 << 20) // more than MaxTableSize allows: 4096
	if b := e.StartBlock(nil); !bytes.Equal(b, unhex(t, "3fe1 1f")) {
		t.Fatalf("got %x", b)
	}
	defer func() {
		if recover() == nil {
			t.Error("AppendField with a pending update did not panic")
		}
	}()
	e.SetMaxTableSize(0)
	e.AppendField(nil, "a", "b")
}

// Empty drops the table, and the next block tells the decoder to drop
// its copy: a size update to 0, then back to the size in force.
func TestEncoderEmpty(t *testing.T) {
	var e Encoder
	var d Decoder
	e.Empty() // before any block: nothing to announce
	b := e.StartBlock(nil)
	if len(b) != 0 {
		t.Fatalf("first block starts with %x", b)
	}
	b = e.AppendField(b, "content-type", "text/plain")
	if _, err := d.AppendFields(nil, b); err != nil || d.table.len() != 1 {
		t.Fatalf("decoder table %d entries, %v", d.table.len(), err)
	}
	e.Empty()
	if e.table.len() != 0 || cap(e.table.buf) != 0 {
		t.Fatalf("after Empty: %d entries, %d bytes held", e.table.len(), cap(e.table.buf))
	}
	b = e.StartBlock(nil)
	if !bytes.Equal(b, unhex(t, "20 3fe1 1f")) {
		t.Fatalf("block after Empty starts with %x", b)
	}
	b = e.AppendField(b, "content-type", "text/plain")
	fs, err := d.AppendFields(nil, b)
	if err != nil || len(fs) != 1 || string(fs[0].Value) != "text/plain" || d.table.len() != 1 {
		t.Fatalf("decoded %v, %v; decoder table %d entries", fs, err, d.table.len())
	}
	e.Empty()
	e.Empty() // twice: one announcement
	if b := e.StartBlock(nil); !bytes.Equal(b, unhex(t, "20 3fe1 1f")) {
		t.Fatalf("block after two Empty calls starts with %x", b)
	}
	if b := e.StartBlock(nil); len(b) != 0 {
		t.Fatalf("the next block starts with %x", b)
	}
	// With the table empty already, there is nothing to announce.
	e.Empty()
	if b := e.StartBlock(nil); len(b) != 0 {
		t.Fatalf("Empty of an empty table: block starts with %x", b)
	}
}

// Trim keeps the entries and lets go of the slack.
func TestDecoderTrim(t *testing.T) {
	var e Encoder
	var d Decoder
	b := e.StartBlock(nil)
	for i := range 20 {
		b = e.AppendField(b, "x-field", strings.Repeat("v", 10+i))
	}
	if _, err := d.AppendFields(nil, b); err != nil {
		t.Fatal(err)
	}
	n := d.table.len()
	d.Trim()
	if d.table.len() != n || cap(d.table.buf) != len(d.table.buf) || cap(d.table.ents) != n {
		t.Fatalf("after Trim: %d entries (want %d), buf %d/%d, ents cap %d", d.table.len(), n, len(d.table.buf), cap(d.table.buf), cap(d.table.ents))
	}
	b = e.StartBlock(nil)
	b = e.AppendField(b, "x-field", strings.Repeat("v", 29)) // indexed: the newest entry
	fs, err := d.AppendFields(nil, b)
	if err != nil || len(fs) != 1 || string(fs[0].Value) != strings.Repeat("v", 29) {
		t.Fatalf("decoded %v, %v", fs, err)
	}
}

func TestEncoderRepresentations(t *testing.T) {
	var e Encoder
	var d Decoder
	b := e.StartBlock(nil)
	b = e.AppendField(b, ":status", "200")                     // static, whole
	b = e.AppendField(b, "content-type", "text/plain")         // static name, indexed
	b = e.AppendField(b, "content-type", "text/plain")         // dynamic, whole
	b = e.AppendField(b, "content-length", "13")               // not indexed
	b = e.AppendField(b, "authorization", "Basic xyz")         // never indexed
	b = e.AppendField(b, "cookie", "session=abcdefghijklmnop") // long cookie: indexed
	want := []byte{0x88, 0x5f}
	if !bytes.HasPrefix(b, want) {
		t.Fatalf("block %x", b)
	}
	fs, err := d.AppendFields(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	const wantFields = ":status: 200\ncontent-type: text/plain\ncontent-type: text/plain\ncontent-length: 13\nauthorization: Basic xyz (never indexed)\ncookie: session=abcdefghijklmnop\n"
	if got := fieldsString(fs); got != wantFields {
		t.Fatalf("got\n%s", got)
	}
	if e.table.len() != 2 || d.table.len() != 2 {
		t.Fatalf("table lengths %d, %d, want 2", e.table.len(), d.table.len())
	}
}

func TestDecoderTableSizeLoweredAndRaised(t *testing.T) {
	var d Decoder
	d.SetMaxTableSize(100)
	d.SetMaxTableSize(4096) // before any block: no update owed
	if _, err := d.AppendFields(nil, []byte{0x82}); err != nil {
		t.Fatal(err)
	}
	d.SetMaxTableSize(0)
	if _, err := d.AppendFields(nil, []byte{0x82}); err != ErrMissingSizeUpdate {
		t.Fatalf("got %v", err)
	}
}
