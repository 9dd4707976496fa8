package load

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// renderH2 leaves out the fields HTTP/2 forbids (wire/h2's one list) and a
// user's Content-Length (load frames the body itself: one content-length
// goes out, load's), sends "te: trailers" when the user's TE names
// trailers among other codings, and trims the whitespace around values
// (§8.2.1: a server refuses a request whose value begins or ends with
// it), as the client does: both encode with wire/h2's request encoder.
func TestRenderH2Fields(t *testing.T) {
	var enc h2.Encoder
	u, _ := url.Parse("http://example.test/p")
	header := http.Header{
		"Content-Length": {"999"},
		"Connection":     {"close"},
		"Keep-Alive":     {"timeout=5"},
		"Upgrade":        {"h2c"},
		"Te":             {"trailers, deflate"},
		"X-Kept":         {"yes"},
		"X-Spaced":       {" \tv 1 "},
	}
	block, err := renderH2(&enc, "POST", u, "http", "example.test", header, []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	var dec h2.Decoder
	var got []string
	if err := dec.Decode(block, func(f h2.Field) {
		if f.Name[0] != ':' {
			got = append(got, string(f.Name)+"="+string(f.Value))
		}
	}); err != nil {
		t.Fatal(err)
	}
	want := "te=trailers x-kept=yes x-spaced=v 1 content-length=4"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("fields %q, want %q", s, want)
	}
}
