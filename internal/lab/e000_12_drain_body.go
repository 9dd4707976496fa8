package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Seed 000, exercise 12: closing a JSON response body without draining
// it vs draining it first.

type labPayload struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Items []int  `json:"items"`
}

var labPayloadValue = labPayload{ID: 7, Name: "widget", Items: []int{1, 2, 3, 4, 5}}

var drainBody = &Experiment{ID: "000-12", Seed: "000", Title: "undrained vs drained response bodies",
	Check: checkDrainBody, Run: runDrainBody}

// jsonValueHandler answers one JSON value (server kind "json-nethttp").
// json.Encoder ends the body with '\n', which json.Decoder leaves unread.
func jsonValueHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(labPayloadValue)
}

// ndjsonHandler answers the same value followed by more records (NDJSON;
// server kind "json-trailing-nethttp"): the client wants the first one,
// and 4 KB stay unread after Decode.
func ndjsonHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for range 64 {
		enc.Encode(labPayloadValue)
	}
}

func fetchNoDrain(c *http.Client, url string) (*labPayload, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var p labPayload
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

func fetchDrain(c *http.Client, url string) (*labPayload, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	var p labPayload
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// decodeSide is a client that fetches the payload one way.
type decodeSide struct {
	c  *http.Client
	dc *dialCounter
	f  func(*http.Client, string) (*labPayload, error)
}

func newDecodeSide(f func(*http.Client, string) (*labPayload, error)) *decodeSide {
	dc := &dialCounter{}
	return &decodeSide{c: &http.Client{Timeout: 5 * time.Second, Transport: newTransport(nil, dc)}, dc: dc, f: f}
}

// do returns an operation that fetches url and checks the decoded value.
func (s *decodeSide) do(url string) func() error {
	return func() error {
		p, err := s.f(s.c, url)
		if err != nil {
			return err
		}
		if fmt.Sprint(*p) != fmt.Sprint(labPayloadValue) {
			return fmt.Errorf("decoded %v, want %v", *p, labPayloadValue)
		}
		return nil
	}
}

func checkDrainBody(env *Env) error {
	for _, kind := range []string{"json-nethttp", "json-trailing-nethttp"} {
		h, err := env.startServer(kind)
		if err != nil {
			return err
		}
		defer h.Close()
		for _, s := range []*decodeSide{newDecodeSide(fetchNoDrain), newDecodeSide(fetchDrain)} {
			if err := s.do(h.URL())(); err != nil {
				return err
			}
			s.c.CloseIdleConnections()
		}
	}
	return nil
}

func runDrainBody(env *Env) (*Result, error) {
	h, err := env.startServer("json-trailing-nethttp")
	if err != nil {
		return nil, err
	}
	defer h.Close()
	hn, err := env.startServer("json-nethttp")
	if err != nil {
		return nil, err
	}
	defer hn.Close()
	single := newArm("Decode, then Close (body ends with the value)", "// server: json.NewEncoder(w).Encode(v): one value and '\\n'\ndefer resp.Body.Close()\njson.NewDecoder(resp.Body).Decode(&p)")
	before := newArm("Decode, then Close", "defer resp.Body.Close()\nvar p Payload\nerr := json.NewDecoder(resp.Body).Decode(&p)")
	after := newArm("Decode, drain, then Close", "defer func() {\n\tio.Copy(io.Discard, resp.Body)\n\tresp.Body.Close()\n}()\nvar p Payload\nerr := json.NewDecoder(resp.Body).Decode(&p)")
	r := newResult(clientMetrics, before, after, single)
	sides := map[*Arm]*decodeSide{before: newDecodeSide(fetchNoDrain), after: newDecodeSide(fetchDrain), single: newDecodeSide(fetchNoDrain)}
	urls := map[*Arm]string{before: h.URL(), after: h.URL(), single: hn.URL()}
	if err := env.measure(r, func(a *Arm, _ int) error {
		return concurrentRun(env.ctx(), a, 1, env.Budget.RunTime*2, sides[a].dc, sides[a].do(urls[a]))
	}); err != nil {
		return nil, err
	}
	for _, s := range sides {
		s.c.CloseIdleConnections()
	}
	r.Setup = "sequential GETs over plain HTTP/1.1 of NDJSON (64 records, 4 KB): the client decodes the first record, leaving the rest unread, as the seed's \"body still has trailing bytes\"; " + h.where() + "."
	r.SameWork = "both arms decode the same Payload value."
	r.compareCosts(before, after, costClaims{
		Time:    Claim{Quote: "380 µs → 28 µs per request, ~13× faster on a keep-alive workload", Ratio: 380000.0 / 28000},
		Garbage: Claim{Quote: "24000 → 2400 B/op", Ratio: 10},
	})
	r.compare("connections", before.Name, after.Name, ConnsPer1k, Claim{Quote: "an undrained body forces the transport to close the TCP connection", Ratio: 0})
	r.compare("only a newline unread", single.Name, after.Name, ConnsPer1k, Claim{Quote: "the seed's example: Decode leaves the Encoder's trailing newline", Info: true})
	r.Notes = append(r.Notes, "When only the Encoder's '\\n' is left, Decoder's first Read takes the whole small body and Go's body reader reports EOF with the last bytes, so the connection is reused without draining: see the \"only a newline unread\" arm's conns/1k req.")
	r.finish(explain(r, map[outcome]string{
		asClaimed: "an unread rest (4 KB of records here) makes the Transport close the connection and draining keeps it; a lone unread newline does not (see the note)",
		partlyAsClaimed: fmt.Sprintf("the undrained arm opens a new connection per request as claimed; a reconnect adds %.0f µs per request here against the seed's ~350 µs, so the slowdown is smaller",
			(r.median(before.Name, NsPerOp.Name)-r.median(after.Name, NsPerOp.Name))/1e3),
		notAsClaimed: "this machine does not see the claimed gap",
	}))
	return r, nil
}
