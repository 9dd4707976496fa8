package wire_test

// Differential fuzzing against net/http. Seeds: the vectors of
// internal/vectors and the files under testdata/fuzz/.
//
// What must hold for any input:
//   - Parse and Decode never panic, never report more bytes than they were
//     given, and fail only with ErrNeedMore or a *wire.Error whose status
//     is one hotpath sends;
//   - the answer does not depend on how the input is split into reads;
//   - where net/http refuses a message, wire refuses it too (or waits for
//     more input), but for the deliberate differences listed below;
//   - where both accept, they agree on the method, target, version,
//     fields, framing, and the bytes and end of the body.
//
// Deliberate differences in which wire accepts what net/http refuses:
//   - empty lines before the request line (RFC 9112 §2.2): compared after
//     skipping them;
//   - trailer sections longer than net/http's 4 KiB buffer (wire allows
//     ChunkedDecoder.MaxTrailerBytes, 16 KiB by default).
// Differences the other way (wire stricter) need no listing: the vectors'
// Notes document them.

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http/httputil"
	"testing"

	"github.com/hotpathhq/hotpath/internal/vectors"
	"github.com/hotpathhq/hotpath/wire"
)

// statuses hotpath answers a malformed message with.
var statuses = map[int]bool{400: true, 413: true, 414: true, 417: true, 431: true, 501: true, 505: true}

// checkError checks that err is nil, ErrNeedMore, or a *wire.Error with a
// status hotpath sends.
func checkError(t *testing.T, err error) {
	t.Helper()
	if err == nil || err == wire.ErrNeedMore || err == io.EOF {
		return
	}
	var we *wire.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a *wire.Error", err, err)
	}
	if !statuses[we.Status] || we.Reason == "" {
		t.Fatalf("error %+v: unexpected status or empty reason", we)
	}
}

func FuzzParseRequest(f *testing.F) {
	// Long vectors (the limits) make slow seeds: minimizing a mutated
	// 30 KiB input takes the fuzzer's whole minimization budget. The
	// conformance tests cover them.
	for _, v := range vectors.Requests {
		if len(v.Raw) <= 4<<10 {
			f.Add([]byte(v.Raw))
		}
	}
	f.Fuzz(fuzzParseRequest)
}

// fuzzParseRequest is FuzzParseRequest's body, one input.
func fuzzParseRequest(t *testing.T, raw []byte) {
	orig := bytes.Clone(raw)
	wr, n, err := parse(raw)
	if n < 0 || n > len(raw) || (err != nil && n != 0) {
		t.Fatalf("Parse = %d, %v for %d bytes", n, err, len(raw))
	}
	checkError(t, err)
	if !bytes.Equal(raw, orig) {
		t.Fatal("Parse modified its input")
	}
	if len(raw) <= 8<<10 {
		if err := checkPrefixes(raw, n, err); err != nil {
			t.Fatal(err)
		}
	}

	if err := checkAgainstNetHTTP(raw, wr, n, err); err != nil {
		t.Fatal(err)
	}
}

func FuzzChunkedDecoder(f *testing.F) {
	seed := uint64(1)
	for i, v := range vectors.Chunks {
		if len(v.Raw) <= 4<<10 && (i < 120 || i%50 == 0) {
			f.Add([]byte(v.Raw), seed)
			seed = seed*6364136223846793005 + 1442695040888963407
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		var d wire.ChunkedDecoder
		body, used, err := decodeStream(&d, [][]byte{raw})
		if used < 0 || used > len(raw) {
			t.Fatalf("consumed %d of %d bytes", used, len(raw))
		}
		checkError(t, err)
		if err == nil {
			t.Fatal("decodeStream returned no verdict")
		}
		if d.Done() != (err == io.EOF) {
			t.Fatalf("Done() = %v with %v", d.Done(), err)
		}

		// Split the input at random (from seed), and byte by byte.
		rng := rand.New(rand.NewPCG(seed, seed>>32|1))
		var cuts []int
		for i := 1; i < len(raw); i++ {
			if rng.IntN(4) == 0 {
				cuts = append(cuts, i)
			}
		}
		splits := [][][]byte{splitAt(raw, cuts)}
		if len(raw) <= 512 { // byte by byte rescans a line per byte: quadratic
			splits = append(splits, bytewise(raw))
		}
		for _, pieces := range splits {
			var d2 wire.ChunkedDecoder
			b2, u2, e2 := decodeStream(&d2, pieces)
			if e2 != err || u2 != used || !bytes.Equal(b2, body) {
				t.Fatalf("in %d pieces: %v after %d bytes (%q); whole: %v after %d bytes (%q)",
					len(pieces), e2, u2, b2, err, used, body)
			}
		}

		// net/http: its chunked reader stops at the last-chunk line; a
		// whole request reads the trailer section too.
		cb, cerr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(raw)))
		hb, hused, herr := netHTTPChunked(raw)
		switch err {
		case io.EOF:
			if cerr != nil || !bytes.Equal(cb, body) {
				t.Fatalf("wire decodes %q, net/http's chunked reader %q, %v", body, cb, cerr)
			}
			if herr != nil {
				if chunkedLimitDifference(raw, herr) != "" {
					return
				}
				t.Fatalf("wire decodes %q, net/http fails: %v", body, herr)
			}
			if !bytes.Equal(hb, body) || hused != used {
				t.Fatalf("wire decodes %q ending at %d, net/http %q ending at %d", body, used, hb, hused)
			}
		case wire.ErrNeedMore:
			if herr == nil {
				t.Fatalf("wire wants more after %q, net/http reads %q ending at %d", body, hb, hused)
			}
		}
	})
}
