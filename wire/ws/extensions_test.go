package ws

import (
	"testing"
)

func TestParseDeflate(t *testing.T) {
	tests := []struct {
		params string
		want   Deflate
		err    error
	}{
		{"", Deflate{}, nil},
		{"; client_max_window_bits", Deflate{ClientMaxWindowBitsParam: true}, nil},
		{";client_max_window_bits=10;server_no_context_takeover", Deflate{ClientMaxWindowBits: 10, ClientMaxWindowBitsParam: true, ServerNoContextTakeover: true}, nil},
		{" ; server_max_window_bits = 8 ; client_no_context_takeover ", Deflate{ServerMaxWindowBits: 8, ClientNoContextTakeover: true}, nil},
		{`; server_max_window_bits="15"`, Deflate{ServerMaxWindowBits: 15}, nil},
		{"; Server_No_Context_Takeover", Deflate{ServerNoContextTakeover: true}, nil},
		{"; server_max_window_bits", Deflate{}, ErrDeflateValue},
		{"; server_max_window_bits=7", Deflate{}, ErrDeflateValue},
		{"; server_max_window_bits=16", Deflate{}, ErrDeflateValue},
		{"; server_max_window_bits=08", Deflate{}, ErrDeflateValue},
		{"; client_max_window_bits=+9", Deflate{}, ErrDeflateValue},
		{`; client_max_window_bits="1\0"`, Deflate{}, ErrDeflateValue},
		{`; client_max_window_bits=""`, Deflate{}, ErrDeflateValue},
		{"; server_no_context_takeover=1", Deflate{}, ErrDeflateValue},
		{"; server_no_context_takeover; server_no_context_takeover", Deflate{}, ErrDeflateDuplicate},
		{"; client_max_window_bits; client_max_window_bits=9", Deflate{}, ErrDeflateDuplicate},
		{"; mux", Deflate{}, ErrDeflateParam},
		{";", Deflate{}, ErrExtensionSyntax},
		{"; =9", Deflate{}, ErrExtensionSyntax},
		{"; client_max_window_bits=", Deflate{}, ErrExtensionSyntax},
		{`; client_max_window_bits="9`, Deflate{}, ErrExtensionSyntax},
		{"x", Deflate{}, ErrExtensionSyntax},
	}
	for _, tt := range tests {
		got, err := ParseDeflate([]byte(tt.params))
		if got != tt.want || err != tt.err {
			t.Errorf("ParseDeflate(%q) = %+v, %v; want %+v, %v", tt.params, got, err, tt.want, tt.err)
		}
	}
}

func TestNextExtension(t *testing.T) {
	list := []byte(` foo; a="x,y", , permessage-deflate ;client_max_window_bits,bar ,`)
	var got []string
	for {
		name, params, rest, err := NextExtension(list)
		if err != nil {
			t.Fatal(err)
		}
		if name == nil {
			break
		}
		got = append(got, string(name)+"|"+string(params))
		list = rest
	}
	want := []string{`foo|; a="x,y"`, `permessage-deflate|;client_max_window_bits`, `bar|`}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("element %d: %q, want %q", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"a b", "a;", "a; b c", `a; b="c`, "a; b=\"\x01\"", "=", "a/b", "a; b=c d"} {
		if _, _, _, err := NextExtension([]byte(bad)); err != ErrExtensionSyntax {
			t.Errorf("NextExtension(%q): %v, want ErrExtensionSyntax", bad, err)
		}
	}
}

func TestFirstDeflateOffer(t *testing.T) {
	tests := []struct {
		list string
		want Deflate
		ok   bool
		err  error
	}{
		{"", Deflate{}, false, nil},
		{"x-webkit-deflate-frame", Deflate{}, false, nil},
		{"permessage-deflate; client_max_window_bits", Deflate{ClientMaxWindowBitsParam: true}, true, nil},
		{"foo, permessage-deflate; server_max_window_bits=20, permessage-deflate; server_max_window_bits=10",
			Deflate{ServerMaxWindowBits: 10}, true, nil},
		{"permessage-deflate; unknown, permessage-deflate", Deflate{}, true, nil},
		{"permessage-deflate; unknown", Deflate{}, false, nil},
		{"permessage-deflate;; x", Deflate{}, false, ErrExtensionSyntax},
		{"Permessage-Deflate", Deflate{}, true, nil},
	}
	for _, tt := range tests {
		got, ok, err := FirstDeflateOffer([]byte(tt.list))
		if got != tt.want || ok != tt.ok || err != tt.err {
			t.Errorf("FirstDeflateOffer(%q) = %+v, %v, %v; want %+v, %v, %v", tt.list, got, ok, err, tt.want, tt.ok, tt.err)
		}
	}
}

func TestAppendDeflate(t *testing.T) {
	tests := []struct {
		d    Deflate
		want string
	}{
		{Deflate{}, "permessage-deflate"},
		{Deflate{ServerNoContextTakeover: true, ClientNoContextTakeover: true, ServerMaxWindowBits: 10, ClientMaxWindowBits: 9, ClientMaxWindowBitsParam: true},
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=9"},
		{Deflate{ClientMaxWindowBitsParam: true}, "permessage-deflate; client_max_window_bits"},
	}
	for _, tt := range tests {
		b := AppendDeflate(nil, tt.d)
		if string(b) != tt.want {
			t.Errorf("AppendDeflate(%+v) = %q, want %q", tt.d, b, tt.want)
		}
		if d, ok, err := FirstDeflateOffer(b); d != tt.d || !ok || err != nil {
			t.Errorf("round trip of %+v: %+v, %v, %v", tt.d, d, ok, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AppendDeflate with 16 window bits did not panic")
		}
	}()
	AppendDeflate(nil, Deflate{ServerMaxWindowBits: 16})
}
