package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Seed 000, exercise 4: json.Marshal then Write vs json.NewEncoder(w).

type jsonItem struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Email string   `json:"email"`
	Tags  []string `json:"tags"`
	Score float64  `json:"score"`
}

type jsonPayload struct {
	Page  int        `json:"page"`
	Total int        `json:"total"`
	Items []jsonItem `json:"items"`
}

// payload5K is the response: 40 records, a few KB of JSON (the seed's
// was 5 KB; payloadSize is what this one encodes to).
var payload5K = func() *jsonPayload {
	p := &jsonPayload{Page: 1, Total: 40}
	for i := range 40 {
		p.Items = append(p.Items, jsonItem{ID: i, Name: fmt.Sprintf("user-%03d", i),
			Email: fmt.Sprintf("user-%03d@example.com", i), Tags: []string{"a", "bb"}, Score: float64(i) * 1.5})
	}
	return p
}()

// payloadSize is the size of payload5K's JSON (json.Marshal's output).
var payloadSize = func() int {
	b, err := json.Marshal(payload5K)
	if err != nil {
		panic(err)
	}
	return len(b)
}()

func marshalHandler(w http.ResponseWriter, _ *http.Request) {
	data, err := json.Marshal(payload5K)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

func encoderHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(payload5K)
}

var jsonEncoder = &Experiment{ID: "000-04", Seed: "000", Title: fmt.Sprintf("json.Marshal+Write vs json.Encoder for a %.1f KB body", float64(payloadSize)/1000),
	Check: checkJSONEncoder, Run: runJSONEncoder}

func checkJSONEncoder(*Env) error {
	outs := [2]string{}
	var vals [2]any
	for i, h := range []http.HandlerFunc{marshalHandler, encoderHandler} {
		w := newSinkWriter(true)
		h(w, nil)
		outs[i] = w.buf.String()
		if err := json.Unmarshal(w.buf.Bytes(), &vals[i]); err != nil {
			return err
		}
		if ct := w.header.Get("Content-Type"); ct != "application/json" {
			return fmt.Errorf("Content-Type %q", ct)
		}
	}
	if outs[0] != strings.TrimSuffix(outs[1], "\n") || !jsonEqual(vals[0], vals[1]) {
		return fmt.Errorf("bodies differ beyond Encoder's trailing newline")
	}
	return nil
}

func runJSONEncoder(env *Env) (*Result, error) {
	before := newArm("json.Marshal + Write", "data, _ := json.Marshal(resp)\nw.Header().Set(\"Content-Type\", \"application/json\")\nw.Write(data)")
	after := newArm("json.NewEncoder(w).Encode", "w.Header().Set(\"Content-Type\", \"application/json\")\njson.NewEncoder(w).Encode(resp)")
	w := newSinkWriter(false)
	call := func(h http.HandlerFunc) func() error {
		return func() error { w.reset(); h(w, nil); return nil }
	}
	r, err := env.benchPair(before, call(marshalHandler), after, call(encoderHandler), costClaims{
		Time:    Claim{Quote: "7200 → 4400 ns/op, ~1.6× faster", Ratio: 7200.0 / 4400},
		Garbage: Claim{Quote: "2400 → 720 B/op, ~3× less garbage", Ratio: 2400.0 / 720},
		Allocs:  Claim{Quote: "18 → 8 allocs/op", Ratio: 18.0 / 8},
	})
	if err != nil {
		return nil, err
	}
	r.Setup = fmt.Sprintf("handler called directly with a reused in-memory ResponseWriter; %s-byte JSON body (40 records; Encoder adds a newline; the seed's was 5 KB).", groupDigits(payloadSize))
	r.SameWork = "both bodies parse to the same JSON value and are byte-equal except Encoder's trailing newline; same Content-Type."
	r.finish(explain(r, map[outcome]string{
		asClaimed:       "Encoder streams through its pooled buffer; Marshal's full-size []byte is the extra garbage",
		partlyAsClaimed: "Encoder still marshals into an internal (pooled) buffer before writing, so it saves the result copy, not the encoding work",
		notAsClaimed:    "Encoder also builds the whole value in a buffer (encodeState) before one Write: the same work, so no real win",
	}))
	return r, nil
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
