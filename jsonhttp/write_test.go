package jsonhttp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

type item struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Price float64  `json:"price"`
}

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := Write(rec, http.StatusCreated, item{ID: 1, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 201 || rec.Header().Get("Content-Type") != ContentType {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"id":1,"name":"a","tags":null,"price":0}` + "\n"
	if rec.Body.String() != want || rec.Header().Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Fatalf("body %q, Content-Length %q", rec.Body.String(), rec.Header().Get("Content-Length"))
	}
}

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

// An encoding error before the first byte is a proper 500, on real servers
// too: never the asked-for 200 with a broken body.
func TestWriteEncodeErrorIs500(t *testing.T) {
	for _, v := range []any{
		map[string]any{"ok": 1, "bad": make(chan int)},
		[]any{1, 2, failing{}},
	} {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Length", "3")
		if err := Write(rec, http.StatusOK, v); err == nil {
			t.Fatal("no error")
		}
		var body struct{ Error string }
		if rec.Code != 500 || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error == "" {
			t.Fatalf("status %d body %q; want 500 and a JSON error", rec.Code, rec.Body.String())
		}
		if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(rec.Body.Len()) {
			t.Fatalf("Content-Length %q for a %d-byte body", cl, rec.Body.Len())
		}
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Write(w, http.StatusOK, failing{})
	}))
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(b), `"error"`) {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
}

func TestWriteDropsLargeBuffers(t *testing.T) {
	big := strings.Repeat("x", 2*maxPooled)
	Write(httptest.NewRecorder(), 200, big)
	for range 100 {
		e := encoders.get()
		if e.buf.Cap() > maxPooled {
			t.Fatalf("pooled encoder buffer of %d bytes", e.buf.Cap())
		}
		encoders.put(e)
	}
}

// marshalThenWrite is the "before" of seed 000, exercise 4.
func marshalThenWrite(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// encoderDirect is the catalog's "after".
func encoderDirect(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// payload is about 5 KB of JSON, the catalog's size; small is ~60 B.
func payload(n int) []item {
	items := make([]item, n)
	for i := range items {
		items[i] = item{ID: i, Name: "item number " + strconv.Itoa(i), Tags: []string{"a", "bb", "ccc"}, Price: 12.5}
	}
	return items
}

func benchWrite(b *testing.B, n int, write func(http.ResponseWriter, any)) {
	v := payload(n)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		write(w, v)
	}
}

func BenchmarkMarshalThenWrite5K(b *testing.B) { benchWrite(b, 70, marshalThenWrite) }
func BenchmarkEncoderDirect5K(b *testing.B)    { benchWrite(b, 70, encoderDirect) }
func BenchmarkWrite5K(b *testing.B) {
	benchWrite(b, 70, func(w http.ResponseWriter, v any) { Write(w, 200, v) })
}
func BenchmarkMarshalThenWrite60B(b *testing.B) { benchWrite(b, 1, marshalThenWrite) }
func BenchmarkEncoderDirect60B(b *testing.B)    { benchWrite(b, 1, encoderDirect) }
func BenchmarkWrite60B(b *testing.B) {
	benchWrite(b, 1, func(w http.ResponseWriter, v any) { Write(w, 200, v) })
}
