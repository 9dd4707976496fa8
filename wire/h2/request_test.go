package h2

import (
	"slices"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire"
)

// encodeRequest encodes a request block as the drivers do: pseudo-header
// fields, the header in the order given (names lowercase), the length.
func encodeRequest(enc *Encoder, method string, header [][]string, n int64, trace func(name, value string)) []byte {
	b := enc.StartBlock(nil)
	b = enc.AppendRequestPseudo(b, method, "https", "example.com", []byte("/a?b"), trace)
	for _, kv := range header {
		b = enc.AppendRequestField(b, kv[0], kv[1:], trace)
	}
	return enc.AppendContentLength(b, method, n, trace)
}

// decoded returns a block's fields as "name: value" lines, and the
// error the server side's validator (RFC 9113 §8) finds in them.
func decoded(t testing.TB, block []byte) ([]string, error) {
	t.Helper()
	var dec Decoder
	fs, err := dec.AppendFields(nil, block)
	if err != nil {
		t.Fatalf("decoding the block: %v", err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Name)+": "+string(f.Value))
	}
	_, err = ValidateRequest(fs, false, false)
	return out, err
}

func TestAppendRequest(t *testing.T) {
	pseudo := []string{":method: GET", ":scheme: https", ":authority: example.com", ":path: /a?b"}
	tests := []struct {
		name   string
		method string
		header [][]string
		n      int64
		want   []string // after the pseudo-header fields
	}{
		{"plain", "GET", [][]string{{"accept", "*/*"}, {"x-a", "1", "2"}}, -1, []string{"accept: */*", "x-a: 1", "x-a: 2"}},
		// §8.2.2: connection-specific fields never go.
		{"connection-specific", "GET", [][]string{{"connection", "close"}, {"keep-alive", "5"}, {"proxy-connection", "x"},
			{"transfer-encoding", "chunked"}, {"upgrade", "h2c"}, {"x", "y"}}, -1, []string{"x: y"}},
		// host is :authority; a user's content-length gives way to the
		// length of what is sent.
		{"host and content-length", "POST", [][]string{{"host", "other"}, {"content-length", "99"}}, 5, []string{"content-length: 5"}},
		// te: only "trailers", once, when a value names the token.
		{"te trailers", "GET", [][]string{{"te", "trailers"}}, -1, []string{"te: trailers"}},
		{"te list naming trailers", "GET", [][]string{{"te", "gzip", "Trailers, deflate"}}, -1, []string{"te: trailers"}},
		{"te without trailers", "GET", [][]string{{"te", "gzip, deflate"}}, -1, nil},
		{"te naming trailersx is no token match", "GET", [][]string{{"te", "trailersx"}}, -1, nil},
		// §8.2.1: no whitespace around a value.
		{"whitespace trimmed", "GET", [][]string{{"x-a", " \t v 1\t "}}, -1, []string{"x-a: v 1"}},
		// content-length: 0 only for the methods that carry a body;
		// none for an unknown length.
		{"empty POST", "POST", nil, 0, []string{"content-length: 0"}},
		{"empty PUT", "PUT", nil, 0, []string{"content-length: 0"}},
		{"empty PATCH", "PATCH", nil, 0, []string{"content-length: 0"}},
		{"empty GET", "GET", nil, 0, nil},
		{"GET with a body", "GET", nil, 12, []string{"content-length: 12"}},
		{"unknown length", "POST", nil, -1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var traced []string
			trace := func(name, value string) { traced = append(traced, name+": "+value) }
			var enc Encoder
			got, err := decoded(t, encodeRequest(&enc, tt.method, tt.header, tt.n, trace))
			if err != nil {
				t.Errorf("the server's validator refuses the block: %v", err)
			}
			want := slices.Concat(pseudo, tt.want)
			want[0] = ":method: " + tt.method
			if !slices.Equal(got, want) {
				t.Errorf("block:\n got %q\nwant %q", got, want)
			}
			if !slices.Equal(traced, want) {
				t.Errorf("traced:\n got %q\nwant %q", traced, want)
			}
		})
	}
}

func TestAppendRequestAllocs(t *testing.T) {
	var enc Encoder
	header := [][]string{{"accept", "*/*"}, {"user-agent", "hotpath"}, {"te", "trailers"}, {"x-request-id", "0123456789"}}
	path := []byte("/index.html?q=1")
	buf := make([]byte, 0, 512)
	run := func() {
		b := enc.StartBlock(buf[:0])
		b = enc.AppendRequestPseudo(b, "POST", "https", "example.com", path, nil)
		for _, kv := range header {
			b = enc.AppendRequestField(b, kv[0], kv[1:], nil)
		}
		buf = enc.AppendContentLength(b, "POST", 1234, nil)
	}
	run()
	if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
		t.Errorf("a request block allocates %v times, want 0", allocs)
	}
}

// FuzzAppendRequest: whatever header fields a caller gives (names and
// values it has checked with wire.ValidHeaderName and ValidHeaderValue),
// the block decodes, passes the server side's RFC 9113 §8 validator (no
// connection-specific field, te only "trailers", no whitespace around
// values, one content-length), and holds every field that goes as is.
func FuzzAppendRequest(f *testing.F) {
	f.Add("x-a", " v ", "te", "gzip, trailers", int64(3))
	f.Add("connection", "close", "content-length", "7", int64(-1))
	f.Add("Host", "h", "transfer-encoding", "chunked", int64(0))
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string, n int64) {
		header := [][]string{{strings.ToLower(n1), v1}, {strings.ToLower(n2), v2}}
		for _, kv := range header {
			if !wire.ValidHeaderName(kv[0]) || !wire.ValidHeaderValue(kv[1]) {
				return // the callers' checks refuse these first
			}
		}
		n = max(n, -1)
		var enc Encoder
		got, err := decoded(t, encodeRequest(&enc, "POST", header, n, nil))
		if err != nil {
			t.Fatalf("header %q, length %d: the block fails the validator: %v", header, n, err)
		}
		for _, kv := range header {
			if v := wire.TrimOWS(kv[1]); sentAsIs(kv[0]) && !slices.Contains(got, kv[0]+": "+v) {
				t.Fatalf("header %q: %s: %q missing from %q", header, kv[0], v, got)
			}
		}
	})
}
