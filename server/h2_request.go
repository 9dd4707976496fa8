package server

// HTTP/2 engine: a header block becomes a request (pseudo-fields
// checked, fields decoded and limited, an *http.Request built).

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// handleBlock handles a complete HEADERS block: a new request, or a
// request's trailers.
func (sc *h2Conn) handleBlock(blk h2.HeaderBlock, ferr *h2.Error) error {
	id := blk.Start.StreamID
	if blk.Start.Type == h2.FramePushPromise {
		return h2.ErrClientPushPromise
	}
	sc.mu.Lock()
	st := sc.table[id]
	// A block on a stream the server refused (trailers the client sent
	// before it saw REFUSED_STREAM) is decoded, for the HPACK table, and
	// dropped: frames on a stream the server reset are ignored (§5.1).
	refused := st == nil && sc.wasRefusedLocked(id)
	var next h2.StreamState
	var serr error
	switch {
	case st != nil:
		next, serr = st.state.Recv(blk.Start.Type, blk.Start.Flags)
	case !refused:
		next, serr = sc.streams.RecvUntracked(id, blk.Start.Type, blk.Start.Flags)
	}
	goingAway := sc.goAway
	admitted := st == nil && !refused && serr == nil // counts toward the limit until Done
	// A GOAWAY sent from here until the stream starts names it among
	// those the server will answer (streams.Last): the connection must
	// not stop reading and close meanwhile, though no handler runs yet
	// (maybeDoneLocked).
	sc.opening = admitted
	sc.mu.Unlock()
	if hook := sc.srv.testHookH2Admitted; hook != nil && admitted {
		hook(sc)
	}
	he := h2Err(serr)
	if serr != nil && (he == nil || !he.Stream) {
		return serr
	}

	// Decode the block whatever becomes of the stream, to keep the HPACK
	// table in step (§4.3).
	trailers := st != nil
	sc.val.Reset(trailers)
	sc.fields.reset()
	var verr error
	err := sc.dec.Decode(blk.Fragment, func(f h2.Field) {
		if verr != nil {
			return
		}
		if err := sc.val.Field(f); err != nil {
			verr = err
			return
		}
		if len(f.Name) > 0 && f.Name[0] == ':' {
			return
		}
		sc.fields.add(f)
	})
	if err != nil && !errors.Is(err, h2.ErrHeaderListTooLarge) {
		return err // a connection error: the table is lost
	}
	if err == nil {
		err = verr
	}
	if err == nil {
		err = sc.val.End()
	}
	if err == nil && !trailers && blk.Start.Flags.Has(h2.FlagEndStream) {
		// A request that ends with its header block has no body: a
		// content-length above 0 is malformed (§8.1.1).
		err = h2.CheckContentLength(sc.val.ContentLength, 0, true)
	}
	if ferr != nil && err == nil {
		err = ferr
	}

	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.opening {
		// Started, refused or reset below: a GOAWAY that came
		// meanwhile may end the connection once this returns.
		sc.opening = false
		defer sc.maybeDoneLocked()
	}
	if refused {
		return nil
	}
	if st == nil {
		// A new stream, even one refused or answered without a
		// handler, is activity: the idle spell starts over.
		sc.busyAgainLocked()
	}
	if he != nil {
		switch {
		case st == nil && he.Code == h2.ErrCodeRefusedStream:
			sc.refuseLocked(id, true) // past MAX_CONCURRENT_STREAMS
		case st == nil || st.state != h2.StateResetLocal:
			sc.resetLocked(id, he.Code)
		}
		return nil
	}
	if err != nil && admitted && ferr == nil && errors.Is(err, h2.ErrHeaderListTooLarge) {
		// Over MaxHeaderBytes: answer 431, as HTTP/1.1 and the hand-off
		// do, rather than a bare reset (§10.5.1 allows either).
		sc.streams.Done()
		sc.answerLocked(id, 431, blk.Start.Flags.Has(h2.FlagEndStream))
		return sc.resets.Count(time.Now())
	}
	if err != nil {
		code := h2.ErrCodeProtocol
		if he := h2Err(err); he != nil {
			code = he.Code
		}
		if admitted {
			sc.streams.Done()
		}
		if st != nil {
			if trailers && errors.Is(err, h2.ErrHeaderListTooLarge) {
				// Trailers past MaxHeaderBytes: the same rule as the
				// head's, told to the handler's body read and to the
				// client (the reset).
				st.failTrailers(trailersTooLarge(sc.srv.cfg.trailerBytes()))
				code = h2.ErrCodeEnhanceYourCalm
			}
			sc.resetLocked(id, code)
		} else {
			sc.appendResetLocked(id, code)
			sc.rememberResetLocked(id)
		}
		return nil // the reset counts among the server's (sentResets)
	}
	if st != nil { // trailers
		// Past the trailers' limits (config.trailerBytes, MaxHeaderCount),
		// on either API, the body read fails naming the limit, and the
		// stream is reset.
		if n := sc.srv.cfg.limits.MaxHeaders; sc.fields.count-1 > n {
			st.failTrailers(tooManyTrailers(n))
			sc.resetLocked(id, h2.ErrCodeEnhanceYourCalm)
			return nil
		}
		if limit := sc.srv.cfg.trailerBytes(); sc.fields.listSize() > limit {
			st.failTrailers(trailersTooLarge(limit))
			sc.resetLocked(id, h2.ErrCodeEnhanceYourCalm)
			return nil
		}
		st.state = next
		if st.nx != nil {
			st.endBody() // the native API has no request trailers
		} else {
			st.trailers(headerOf(sc.fields.list(), sc.fields.values(), nil, true))
		}
		if !next.Active() {
			sc.streamClosedLocked(st)
		}
		return nil
	}
	if goingAway || sc.closed || !sc.srv.orphans.admit(sc.client) {
		// Going away, or the client has too many handlers running past
		// their connections (orphans.go): refused, no handler runs.
		sc.streams.Done()
		sc.refuseLocked(id, !goingAway && !sc.closed)
		return nil
	}
	if sc.srv.Native != nil {
		st = sc.newNativeStream(id, next, blk.Start.Flags.Has(h2.FlagEndStream))
	} else {
		st = sc.newStream(id, next)
		if err := sc.newRequest(st, blk.Start.Flags.Has(h2.FlagEndStream)); err != nil {
			delete(sc.table, id)
			sc.streams.Done()
			sc.appendResetLocked(id, h2.ErrCodeProtocol)
			sc.rememberResetLocked(id)
			return nil
		}
	}
	if !next.Active() {
		sc.streamClosedLocked(st)
	}
	sc.running++
	sc.startLocked(st)
	if id == h2.MaxStreamID || sc.srv.noKeepAlives.Load() {
		// No stream can follow this one (§5.1.1), or keep-alives are
		// off (SetKeepAlivesEnabled): say so, and close once it is
		// done rather than idle until IdleTimeout.
		sc.goAwayLocked()
	}
	return nil
}

// trailersTooLarge and tooManyTrailers are the errors a handler's body
// read returns when the request's trailers pass the head's limits.
func trailersTooLarge(limit int) error {
	return fmt.Errorf("server: %s: stream reset (%w)", trailersTooLargeText(limit), wire.ErrTrailerTooLarge)
}

func tooManyTrailers(limit int) error {
	return fmt.Errorf("server: more than Server.MaxHeaderCount (%d) request trailer fields: stream reset (%w)", limit, wire.ErrTooManyTrailers)
}

// newRequest builds the stream's request from the validated header
// block, in the stream's own memory where it can: the URL, the context,
// the body and the header values; the Request and its Header map are
// the two allocations of their own.
func (sc *h2Conn) newRequest(st *h2Stream, ended bool) error {
	v := &sc.val
	var r http.Request
	if err := sc.strs.requestTarget(&r, &st.url, v.Method, v.Path, v.Authority, true); err != nil {
		return err
	}
	r.Proto, r.ProtoMajor = "HTTP/2.0", 2
	st.isHead = r.Method == http.MethodHead
	r.Header = sc.strs.requestHeader(sc.fields.list(), sc.fields.vals, st.vals[:], true)
	if v.Protocol != nil { // RFC 8441, where net/http's HTTP/2 server puts it
		r.Header[":protocol"] = []string{string(v.Protocol)}
		st.tunnel = true
	}
	st.fieldCount = sc.fields.count
	if r.Host == "" {
		r.Host = r.Header.Get("Host")
	}
	r.RemoteAddr = sc.remote
	r.TLS = sc.tlsState
	if ended {
		r.Body = http.NoBody
		st.bodyEnd = true
	} else {
		r.ContentLength = -1
		if v.ContentLength >= 0 {
			r.ContentLength = v.ContentLength
		}
		st.body.st = st
		r.Body = &st.body
		st.expect100 = strings.EqualFold(r.Header.Get("Expect"), "100-continue")
	}
	r.Trailer = declaredTrailers(r.Header)
	st.req = r.WithContext(&st.ctx)
	return nil
}

// h2Fields gathers a header block's regular fields as it is decoded
// (the decoder's bytes live only until the next field): canonical
// names, and the values back to back in one buffer, reused from block
// to block.
type h2Fields struct {
	names []byte // lowercase, back to back
	nends []int  // end of each name in names
	vals  []byte
	ends  []int         // end of each value in vals
	count int           // fields as HTTP/1.1 would count them: one per field, plus Host
	views []wire.Header // list's, reused
}

func (f *h2Fields) reset() {
	f.names, f.nends, f.vals, f.ends = f.names[:0], f.nends[:0], f.vals[:0], f.ends[:0]
	f.count = 1
}

func (f *h2Fields) add(fl h2.Field) {
	f.count++
	if string(fl.Name) == "trailer" {
		// Each name it declares counts, as on HTTP/1.1 (wire.Request).
		if k := wire.ListLen(fl.Value); k > 1 {
			f.count += k - 1
		}
	}
	f.names = append(f.names, fl.Name...)
	f.nends = append(f.nends, len(f.names))
	f.vals = append(f.vals, fl.Value...)
	f.ends = append(f.ends, len(f.vals))
}

// listSize is the fields' size as HPACK counts a header list (RFC 7541
// §4.1): name, value and 32 bytes each.
func (f *h2Fields) listSize() int { return len(f.names) + len(f.vals) + 32*len(f.ends) }

// field returns the i-th field's name and the bounds of its value.
func (f *h2Fields) field(i int) (name []byte, start, end int) {
	ns, vs := 0, 0
	if i > 0 {
		ns, vs = f.nends[i-1], f.ends[i-1]
	}
	return f.names[ns:f.nends[i]], vs, f.ends[i]
}

// values returns the values as one string.
func (f *h2Fields) values() string { return string(f.vals) }

// list returns the fields as wire.Headers, viewing names and values
// (valid until the next reset).
func (f *h2Fields) list() []wire.Header {
	f.views = f.views[:0]
	for i := range f.ends {
		name, start, end := f.field(i)
		f.views = append(f.views, wire.Header{Name: name, Value: f.vals[start:end:end]})
	}
	return f.views
}
