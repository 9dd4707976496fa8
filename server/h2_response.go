package server

// HTTP/2 engine: the response record's HTTP/2 side (response.go): the
// head as a HEADERS frame, the body as DATA frames, trailers as a last
// HEADERS frame, for both APIs.

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2Commit queues the head, without END_STREAM, and the body collected so
// far behind it: the body streams from here (response.commit).
func (r *response) h2Commit() error {
	if err := r.h2Head(false); err != nil {
		return err
	}
	pending := r.buf
	r.buf = r.buf[:0]
	if len(pending) > 0 {
		_, err := r.h2Stream(pending)
		return err
	}
	return nil
}

// h2Stream sends p as DATA after the head went out, within the declared
// length (checkStreamed, as on HTTP/1.1).
func (r *response) h2Stream(p []byte) (int, error) {
	if discard, err := r.checkStreamed(len(p)); err != nil || discard {
		return discardedLen(len(p), err)
	}
	if err := r.h2Send(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// h2Send queues p as DATA, counting it, END_STREAM on the last frame with
// end.
func (r *response) h2Send(p []byte, end bool) error {
	if err := r.st.sendData(p, end); err != nil {
		r.err = err
		return err
	}
	r.sent += int64(len(p))
	return nil
}

// h2Head queues the HEADERS frame of the final response: the status, the
// Date unless the handler set one (or suppressed it), the Content-Type,
// the handler's fields but those HTTP/2 does not carry, and the declared
// length. With end the response ends with it.
func (r *response) h2Head(end bool) error {
	st := r.st
	r.discard = st.isHead || !wire.BodyAllowed(r.status)
	r.state = respFixed
	if end {
		r.state = respDone
	}
	err := st.queueBlock(end, true, func(sc *h2Conn, block []byte) []byte {
		enc := &sc.enc
		block = enc.AppendField(block, ":status", statusString(r.status))
		if !r.hasDate {
			sc.num = appendDate(sc.num[:0], time.Now())
			block = enc.AppendFieldBytes(block, dateName, sc.num)
		}
		if len(r.contentType) > 0 || r.typeSet {
			block = enc.AppendFieldBytes(block, contentTypeName, r.contentType)
		}
		block = sc.appendRespFields(block, r.hdrs[:r.nhdrs])
		switch {
		case r.status < 200 || r.status == http.StatusNoContent:
		case r.status == http.StatusNotModified:
			// A handler's length (of the representation it did not
			// send) is dropped, as on HTTP/1.1 (h1_response.go): Go's
			// HTTP/2 client would wait for that many body bytes.
		case r.declaredLen >= 0:
			sc.num = strconv.AppendInt(sc.num[:0], r.declaredLen, 10)
			block = enc.AppendFieldBytes(block, contentLengthName, sc.num)
		}
		st.headSent = true
		return block
	})
	if err != nil {
		r.err = err
	}
	return err
}

// h2Informational queues a 1xx response with the given fields; the final
// response follows later.
func (r *response) h2Informational(code int, fields []respHeader) error {
	return r.st.queueBlock(false, false, func(sc *h2Conn, block []byte) []byte {
		block = sc.enc.AppendField(block, ":status", statusString(code))
		return sc.appendRespFields(block, fields)
	})
}

// h2Finish completes the response after the handler returned (finish on
// HTTP/2): the head if it was not sent, with the length of a body it
// holds whole (as net/http's, but for a HEAD that wrote nothing or a
// handler that suppressed the length), the collected body, trailers,
// END_STREAM. A body shorter than its declared length ends as net/http's
// does: the client sees the length and the END_STREAM disagree (§8.1.1)
// and fails the response. A client still sending a body nobody will read
// is told to stop (h2QueueNoErr).
func (r *response) h2Finish() {
	st := r.st
	if r.err != nil || r.state == respDone || r.state == respAborted {
		return
	}
	bodyAllowed := wire.BodyAllowed(r.status)
	trailers := r.ntrailers > 0 && !st.isHead && bodyAllowed
	if r.state == respCollecting {
		if r.declaredLen < 0 && !r.forceChunked && bodyAllowed && (len(r.buf) > 0 || !st.isHead) {
			r.declaredLen = int64(len(r.buf)) // all of it is here: say how long
		}
		if (len(r.buf) == 0 || st.isHead || !bodyAllowed) && !trailers {
			if r.h2Head(true) == nil {
				r.h2QueueNoErr()
			}
			return
		}
		if r.h2Head(false) != nil {
			return
		}
	}
	if (len(r.buf) > 0 || !trailers) && r.h2Send(r.buf, !trailers) != nil {
		return
	}
	r.buf = r.buf[:0]
	r.state = respDone
	if trailers {
		st.queueBlock(true, true, func(sc *h2Conn, block []byte) []byte {
			return sc.appendRespFields(block, r.trailers[:r.ntrailers])
		})
	}
	r.h2QueueNoErr()
}

// h2QueueNoErr: if the client is still sending a body nobody will read,
// reset the stream with NO_ERROR once the reader has read again (§8.1).
func (r *response) h2QueueNoErr() {
	st := r.st
	sc := st.sc
	sc.mu.Lock()
	if st.state == h2.StateHalfClosedLocal {
		sc.queueNoErrLocked(st)
	}
	sc.mu.Unlock()
}

// appendRespFields encodes response fields, lowercasing their names in
// the connection's scratch; the fields HTTP/2 does not carry (§8.2.2) are
// left out. Under sc.mu.
func (sc *h2Conn) appendRespFields(block []byte, fields []respHeader) []byte {
	for i := range fields {
		f := &fields[i]
		if h2HopFold(f.name) {
			continue
		}
		sc.lname = appendLower(sc.lname[:0], f.name)
		block = sc.enc.AppendFieldBytes(block, sc.lname, f.value)
	}
	return block
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
