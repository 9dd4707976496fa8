package wire_test

// Oracles: net/http reads the same bytes beside wire, and these helpers
// say whether the two agree. The conformance tests and the fuzz targets
// share them.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"reflect"
	"slices"
	"strings"

	"github.com/hotpathhq/hotpath/wire"
)

// parse runs wire's parser with the default limits.
func parse(raw []byte) (*wire.Request, int, error) {
	lim := wire.DefaultLimits()
	var r wire.Request
	n, err := r.Parse(raw, &lim)
	return &r, n, err
}

// netHTTPHead runs http.ReadRequest on raw. headLen is how many bytes the
// head took: what ReadRequest consumed, less what bufio holds unread.
func netHTTPHead(raw []byte) (req *http.Request, br *bufio.Reader, src *bytes.Reader, headLen int, err error) {
	src = bytes.NewReader(raw)
	br = bufio.NewReader(src)
	req, err = http.ReadRequest(br)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	return req, br, src, consumed(raw, br, src), nil
}

// consumed is how much of raw the reader br (over src) has handed out.
func consumed(raw []byte, br *bufio.Reader, src *bytes.Reader) int {
	return len(raw) - src.Len() - br.Buffered()
}

// leadingEmptyLines counts the bytes of the empty lines (CRLF or LF) that
// start raw.
func leadingEmptyLines(raw []byte) int {
	i := 0
	for i < len(raw) {
		switch {
		case raw[i] == '\n':
			i++
		case raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n':
			i += 2
		default:
			return i
		}
	}
	return i
}

// wireHeaderAsNetHTTP builds the http.Header net/http should have read
// from the fields wire saw, applying the changes ReadRequest makes:
// canonical keys, Host and Transfer-Encoding removed, repeated Content-Length folded
// into one, Trailer moved out of a chunked request, and Pragma: no-cache
// implying Cache-Control.
func wireHeaderAsNetHTTP(r *wire.Request) http.Header {
	h := http.Header{}
	for _, f := range r.Headers {
		k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		h[k] = append(h[k], string(f.Value))
	}
	delete(h, "Host") // ReadRequest moves it to Request.Host
	delete(h, "Transfer-Encoding")
	if cl := h["Content-Length"]; len(cl) > 1 {
		h["Content-Length"] = cl[:1]
	}
	if r.Chunked {
		delete(h, "Trailer")
		delete(h, "Content-Length")
	}
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"}
		}
	}
	return h
}

// compareHeads lists every way wire's reading of a head differs from
// net/http's. n and hn are the head lengths each found.
func compareHeads(wr *wire.Request, n int, hr *http.Request, hn int) error {
	var diffs []string
	check := func(what string, w, h any) {
		if !reflect.DeepEqual(w, h) {
			diffs = append(diffs, fmt.Sprintf("%s: wire %#v, net/http %#v", what, w, h))
		}
	}
	check("head length", n, hn)
	check("method", string(wr.Method), hr.Method)
	check("target", string(wr.Target), hr.RequestURI)
	check("proto", string(wr.Proto), hr.Proto)
	check("proto version", [2]int{1, wr.ProtoMinor}, [2]int{hr.ProtoMajor, hr.ProtoMinor})
	check("header", wireHeaderAsNetHTTP(wr), hr.Header)
	if hr.URL.Host == "" { // otherwise the target's authority is Request.Host
		check("Host", string(wr.Host), hr.Host)
	}
	check("content length", wr.ContentLength, hr.ContentLength)
	check("chunked", wr.Chunked, len(hr.TransferEncoding) > 0)
	check("close", wr.Close, hr.Close)
	if len(diffs) == 0 {
		return nil
	}
	return errors.New(strings.Join(diffs, "\n"))
}

// readBody reads the body the way each side frames it: wire from raw[n:]
// by its Content-Length or ChunkedDecoder, net/http from its Request.Body.
// It reports an error when they disagree on where the message ends or on
// its bytes, or when net/http refuses a body that wire takes whole.
func compareBodies(raw []byte, wr *wire.Request, n int, hr *http.Request, br *bufio.Reader, src *bytes.Reader) error {
	hb, herr := io.ReadAll(hr.Body)
	hend := consumed(raw, br, src)
	var wb []byte
	var wend int
	var werr error
	if wr.Chunked {
		var d wire.ChunkedDecoder
		var m int
		wb, m, werr = decodeStream(&d, [][]byte{raw[n:]})
		wend = n + m
	} else {
		wend = n + int(min(wr.ContentLength, int64(len(raw)-n)))
		wb = raw[n:wend]
		if wend-n < int(wr.ContentLength) {
			werr = wire.ErrNeedMore
		}
	}
	switch {
	case werr == nil || werr == io.EOF:
		if herr != nil {
			if why := chunkedLimitDifference(raw[n:], herr); why != "" {
				return nil
			}
			return fmt.Errorf("body: wire reads %q whole, net/http fails: %v", wb, herr)
		}
		if !bytes.Equal(wb, hb) || wend != hend {
			return fmt.Errorf("body: wire reads %q ending at %d, net/http %q ending at %d", wb, wend, hb, hend)
		}
	case herr == nil:
		if werr == wire.ErrNeedMore {
			return fmt.Errorf("body: wire wants more input after %q, net/http reads %q whole", wb, hb)
		}
		// wire refuses a body net/http takes: stricter, allowed.
	}
	return nil
}

// chunkedLimitDifference explains a chunked body that net/http refuses
// and wire takes because their limits differ, or returns "".
func chunkedLimitDifference(body []byte, herr error) string {
	if strings.Contains(herr.Error(), "suspiciously long trailer") {
		return "net/http caps trailers at its 4 KiB buffer, wire at 16 KiB"
	}
	return ""
}

// decodeStream decodes a chunked body that arrives in pieces, the way a
// server reading a socket drives the decoder: bytes left unconsumed are
// kept and the next piece appended. It returns the body, the bytes
// consumed, and io.EOF for a whole body, ErrNeedMore when the input ran
// out first, or the decoder's error.
func decodeStream(d *wire.ChunkedDecoder, pieces [][]byte) (body []byte, used int, err error) {
	var pending []byte
	for _, p := range pieces {
		pending = append(pending, p...)
		for {
			data, n, err := d.Decode(pending)
			if n < 0 || n > len(pending) || len(data) > n {
				return body, used, fmt.Errorf("Decode returned n=%d, %d data bytes for %d input bytes", n, len(data), len(pending))
			}
			body = append(body, data...)
			used += n
			pending = pending[n:]
			if err == wire.ErrNeedMore {
				break
			}
			if err != nil {
				return body, used, err
			}
			if n == 0 {
				return body, used, errors.New("Decode made no progress")
			}
		}
	}
	return body, used, wire.ErrNeedMore
}

// netHTTPChunked reads raw as the body of a chunked request through
// net/http, trailers included, and reports the body, the bytes consumed
// and the error.
func netHTTPChunked(raw []byte) ([]byte, int, error) {
	const head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	msg := append([]byte(head), raw...)
	src := bytes.NewReader(msg)
	br := bufio.NewReader(src)
	req, err := http.ReadRequest(br)
	if err != nil {
		panic(err) // the head is fixed
	}
	body, err := io.ReadAll(req.Body)
	return body, consumed(msg, br, src) - len(head), err
}

// splitAt cuts b at the given offsets (ascending, within b).
func splitAt(b []byte, cuts []int) [][]byte {
	var out [][]byte
	prev := 0
	for _, c := range cuts {
		out = append(out, b[prev:c])
		prev = c
	}
	return append(out, b[prev:])
}

// bytewise cuts b into one-byte pieces.
func bytewise(b []byte) [][]byte {
	out := make([][]byte, len(b))
	for i := range b {
		out[i] = b[i : i+1]
	}
	return out
}

// prefixCuts lists the prefix lengths worth feeding to Parse for raw: all
// of them for short inputs; for long ones, those around line endings (the
// first 64) and a spread of others, so that the check stays cheap enough
// for fuzzing.
func prefixCuts(raw []byte) []int {
	if len(raw) <= 128 {
		cuts := make([]int, len(raw)+1)
		for i := range cuts {
			cuts[i] = i
		}
		return cuts
	}
	seen := map[int]bool{}
	var cuts []int
	add := func(i int) {
		if i >= 0 && i <= len(raw) && !seen[i] {
			seen[i] = true
			cuts = append(cuts, i)
		}
	}
	for i := range 16 {
		add(i)
		add(len(raw) - i)
		add(len(raw) * i / 16)
	}
	lines := 0
	for i, c := range raw {
		if c == '\n' && lines < 64 {
			lines++
			add(i - 1)
			add(i)
			add(i + 1)
			add(i + 2)
		}
	}
	slices.Sort(cuts)
	return cuts
}

// checkPrefixes feeds Parse growing prefixes of raw, as bytes arrive from
// a socket, and checks that each answer is ErrNeedMore until the full
// input's answer (n, err) appears, and that answer ever after.
func checkPrefixes(raw []byte, n int, err error) error {
	settled := false
	for _, i := range prefixCuts(raw) {
		_, ni, erri := parse(raw[:i])
		if ni < 0 || ni > i {
			return fmt.Errorf("prefix %d: Parse returned n=%d", i, ni)
		}
		if erri == wire.ErrNeedMore {
			if settled {
				return fmt.Errorf("prefix %d of %d: ErrNeedMore after a shorter prefix was answered", i, len(raw))
			}
			if err == nil && i >= n {
				return fmt.Errorf("prefix %d: ErrNeedMore though the %d-byte head is complete", i, n)
			}
			continue
		}
		if erri != err || ni != n {
			return fmt.Errorf("prefix %d of %d: Parse = %d, %v; whole input: %d, %v", i, len(raw), ni, erri, n, err)
		}
		settled = true
	}
	return nil
}

// checkAgainstNetHTTP compares wire's verdict on raw (wr, n, err from
// parse) with http.ReadRequest's: net/http may not reject what wire
// accepts, both must read the same head and body, and wire may not want
// more input where net/http read a whole head. net/http does not skip
// empty lines before the request line; wire does, so the comparison
// starts at the request line.
func checkAgainstNetHTTP(raw []byte, wr *wire.Request, n int, err error) error {
	skip := 0
	if err == nil {
		skip = leadingEmptyLines(raw)
	}
	hr, br, src, hn, herr := netHTTPHead(raw[skip:])
	switch {
	case err == nil && herr != nil:
		return fmt.Errorf("wire accepts a %d-byte head, net/http rejects: %v", n, herr)
	case err == nil:
		if err := compareHeads(wr, n-skip, hr, hn); err != nil {
			return fmt.Errorf("wire and net/http disagree:\n%v", err)
		}
		return compareBodies(raw[skip:], wr, n-skip, hr, br, src)
	case err == wire.ErrNeedMore && herr == nil:
		return fmt.Errorf("wire wants more input, net/http reads a %d-byte head", hn)
	}
	return nil
}
