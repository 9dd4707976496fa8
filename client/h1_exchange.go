package client

// One HTTP/1.1 exchange on a connection: the request written (head,
// then the body as it allows), the response heads read until a final
// one, "Expect: 100-continue", and the errors mapped to net/http's.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// roundTrip writes req on c and reads the response head. On success the
// response body owns c until it is read to its end or closed.
func (c *conn) roundTrip(req *http.Request, ctx context.Context, deadline time.Time) (*http.Response, error) {
	// Deadlines first, then the cancel's watch: a cancel's past deadline
	// must not be overwritten.
	c.deadline = deadline
	if !deadline.IsZero() {
		// The whole exchange, body included, ends by then: writes and
		// reads carry it on the socket, and no timer runs per request.
		slack := c.t.Timeout / deadlineSlack
		wr := !within(c.wdl, deadline, slack)
		rd := c.t.ResponseHeaderTimeout <= 0 && !within(c.rdl, deadline, slack) // else headerDeadline sets it
		switch {
		case wr && rd:
			c.wdl, c.rdl = deadline.Add(slack), deadline.Add(slack)
			c.nc.SetDeadline(c.wdl)
		case wr:
			c.wdl = deadline.Add(slack)
			c.nc.SetWriteDeadline(c.wdl)
		case rd:
			c.rdl = deadline.Add(slack)
			c.nc.SetReadDeadline(c.rdl)
		}
	} else {
		if !c.wdl.IsZero() {
			c.wdl = time.Time{}
			c.nc.SetWriteDeadline(c.wdl)
		}
		if c.t.ResponseHeaderTimeout <= 0 && !c.rdl.IsZero() { // else headerDeadline sets it
			c.rdl = time.Time{}
			c.nc.SetReadDeadline(c.rdl)
		}
	}
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		stop = context.AfterFunc(ctx, c.interrupt)
	}
	resp, err := c.exchange(req, ctx, stop)
	if err != nil {
		if stop != nil {
			stop()
		}
		return nil, c.mapError(ctx, err)
	}
	return resp, nil
}

// mapError turns the socket errors of an interrupted exchange into what
// net/http reports: the context's error, or a header timeout.
func (c *conn) mapError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if c.pastDeadline() {
			return errRequestTimeout
		}
		if c.t.ResponseHeaderTimeout > 0 {
			return errHeaderTimeout
		}
	}
	return err
}

// pastDeadline reports whether the request's overall deadline has come.
func (c *conn) pastDeadline() bool {
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline)
}

// exchange writes the request and reads the response head.
func (c *conn) exchange(req *http.Request, ctx context.Context, stop func() bool) (*http.Response, error) {
	hasBody := req.Body != nil && req.Body != http.NoBody
	chunked := hasBody && req.ContentLength <= 0
	if len(req.TransferEncoding) > 0 {
		if len(req.TransferEncoding) != 1 || req.TransferEncoding[0] != "chunked" {
			return nil, fmt.Errorf("client: unsupported Transfer-Encoding %q", req.TransferEncoding)
		}
		chunked = hasBody
	}
	gzip := !c.t.DisableCompression && req.Method != http.MethodHead &&
		req.Header["Accept-Encoding"] == nil && req.Header["Range"] == nil
	c.wbuf = appendRequestHead(c.wbuf[:0], req, hasBody, chunked, gzip, c.t.DisableKeepAlives)
	trace := c.trace
	if trace != nil {
		traceHead(trace, c.wbuf)
	}

	expect := hasBody && headerHasToken(req.Header["Expect"], "100-continue")
	bodySent := !hasBody
	var up *upload // a streamed body, written while the response is read
	switch {
	case !hasBody || expect:
		_, err := c.write(c.wbuf)
		if trace != nil && (!hasBody || err != nil) {
			traceWroteRequest(trace, err)
		}
		if err != nil {
			return nil, err
		}
		if expect && trace != nil && trace.Wait100Continue != nil {
			trace.Wait100Continue()
		}
	case !inMemoryBody(req):
		if _, err := c.write(c.wbuf); err != nil {
			traceWroteRequest(trace, err)
			return nil, err
		}
		c.wbuf = c.wbuf[:0]
		up = c.startUpload(ctx, req, chunked)
		bodySent = true
	default:
		err := c.writeBody(req, chunked, false)
		traceWroteRequest(trace, err)
		if err != nil {
			if resp := c.earlyResponse(req, ctx, gzip, stop, err); resp != nil {
				return resp, nil
			}
			return nil, err
		}
		bodySent = true
	}

	timed := false // the read deadline is the head's, to restore once it is in
	if expect {
		wait := c.t.ExpectContinueTimeout
		if wait == 0 {
			wait = defaultExpectContinueTimeout
		}
		if wait > 0 {
			if err := c.setReadDeadline(ctx, time.Now().Add(wait)); err != nil {
				return nil, err
			}
			timed = true
		} else {
			c.wbuf = c.wbuf[:0] // the head is out
			err := c.writeBody(req, chunked, false)
			traceWroteRequest(trace, err)
			if err != nil {
				return nil, err
			}
			bodySent = true
		}
	}
	if (!expect || bodySent) && up == nil && c.t.ResponseHeaderTimeout > 0 {
		restore, err := c.headerDeadline(ctx)
		if err != nil {
			return nil, err
		}
		timed = timed || restore
	}

	// Read heads until a final one; a 100 releases a waiting body.
	var n int
	firstByte := trace != nil && trace.GotFirstResponseByte != nil
	for informational := 0; ; {
		if firstByte && c.w > c.r {
			firstByte = false
			trace.GotFirstResponseByte()
		}
		var err error
		n, err = c.resp.Parse(c.rbuf[c.r:c.w], &c.lim)
		if err == wire.ErrNeedMore {
			ferr := c.fill()
			if ferr == nil {
				continue
			}
			if up != nil {
				if err := up.failed(c); err != nil {
					return nil, err
				}
				return nil, ferr
			}
			if !bodySent && errors.Is(ferr, os.ErrDeadlineExceeded) && ctx.Err() == nil && !c.pastDeadline() {
				// No 100 Continue in time: send the body anyway.
				err := c.sendHeldBody(ctx, req, chunked)
				traceWroteRequest(trace, err)
				if err != nil {
					return nil, err
				}
				bodySent = true
				continue
			}
			return nil, ferr
		}
		if err != nil {
			if up != nil {
				up.failed(c)
			}
			return nil, c.malformed(err)
		}
		if c.resp.StatusCode >= 200 || c.resp.StatusCode == 101 {
			break
		}
		delivered := trace != nil && trace.Got1xxResponse != nil
		if trace != nil {
			if err := trace1xx(trace, c.resp.StatusCode, c.resp.Headers, !bodySent); err != nil {
				if up != nil {
					up.failed(c)
				}
				return nil, err
			}
		}
		c.r += n
		// 1xx heads handed to Got1xxResponse are the caller's to limit,
		// as in net/http; the others may take MaxResponseHeaderBytes in
		// all (any number of them: 102 Processing as a heartbeat).
		if !delivered {
			informational += n
		}
		if informational > c.lim.MaxHeaderBytes {
			if up != nil {
				up.failed(c)
			}
			return nil, errTooMany1xx
		}
		if c.resp.StatusCode == 100 && !bodySent {
			err := c.sendHeldBody(ctx, req, chunked)
			traceWroteRequest(trace, err)
			if err != nil {
				return nil, err
			}
			bodySent = true
		}
	}
	switched := c.resp.StatusCode == 101
	if switched && up != nil {
		up.failed(c)
		return nil, errors.New("client: 101 Switching Protocols while the request body was being sent")
	}
	streamFailed := false
	if up != nil {
		// The final head, maybe before the body ended: returned at once;
		// the response's end settles the upload (body.finish).
		done, err := up.headArrived()
		switch {
		case !done:
			c.upload = up
		case errors.Is(err, errRequestBody):
			// The caller's body broke: the request was never whole,
			// whatever the server made of its part.
			up.failed(c)
			return nil, err
		case err != nil:
			streamFailed = true // an early answer: the body was cut
		}
		if c.t.ResponseHeaderTimeout > 0 {
			c.rdl = aLongTimeAgo // the writer may have set the head's deadline
			timed = true
		}
	}
	if timed && !c.bodyBuffered(n, req.Method == http.MethodHead) {
		// The body's reads get the request's deadline back (a body read
		// whole from the buffer needs none: the next request sets its own).
		if err := c.lazyReadDeadline(ctx, c.deadline, c.t.Timeout/deadlineSlack); err != nil {
			return nil, err
		}
	}
	closing := streamFailed || switched || req.Close || c.t.DisableKeepAlives || c.resp.Close ||
		headerHasToken(req.Header["Connection"], "close")
	if !bodySent {
		// A final answer before 100 Continue. On a connection that goes
		// on, the server reads the body next: it is sent, as net/http
		// does, on a goroutine of its own while the response is read (as
		// net/http's write loop sends it), since the server may read it
		// only once its response is out: written first, a response
		// bigger than the socket buffers and the body would wait on each
		// other. The response's end settles it (the connection is kept if
		// the body was written whole by then). On a connection that
		// closes it stays unsent.
		if closing {
			closeRequestBody(req)
			traceWroteRequest(trace, nil)
		} else {
			c.wbuf = c.wbuf[:0] // the head is out
			up = c.startUpload(ctx, req, chunked)
			up.headArrived() // the writer leaves the read deadline alone
			c.upload = up
			bodySent = true
		}
	}
	closeAfter := !bodySent || closing
	return c.newResponse(req, n, gzip, closeAfter, stop)
}

// malformed describes a response head the parser refused (err, a
// *wire.Error), in net/http's words where callers match them.
func (c *conn) malformed(err error) error {
	switch {
	case errors.Is(err, wire.ErrHeaderTooLarge):
		return fmt.Errorf("client: server response headers exceeded %d bytes; aborted (MaxResponseHeaderBytes): %w", c.lim.MaxHeaderBytes, err)
	case errors.Is(err, wire.ErrBadContentLength):
		if v, ok := headValue(c.rbuf[c.r:c.w], "content-length"); ok {
			return fmt.Errorf("client: malformed response from %s: bad Content-Length %q: %w", c.key.host, v, err)
		}
	}
	return fmt.Errorf("client: malformed response from %s: %w", c.key.host, err)
}

// headValue finds the first field name in a raw head, for an error
// message: its value, trimmed.
func headValue(head []byte, name string) (string, bool) {
	for _, line := range bytes.Split(head, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(k)), name) {
			return string(bytes.TrimSpace(v)), true
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
	}
	return "", false
}

// bodyBuffered reports whether the body of the response whose head is
// the n bytes at rbuf[r:] is all in the buffer already.
func (c *conn) bodyBuffered(n int, head bool) bool {
	switch c.resp.Framing(head) {
	case wire.NoBody:
		return true
	case wire.LengthBody:
		return int64(c.w-c.r-n) >= c.resp.ContentLength
	}
	return false
}

// earlyResponse looks, after writing the body failed with werr, for a
// final response the server sent before it stopped reading (a 413 to an
// upload, say). net/http reads while it writes and returns that response;
// this Transport writes first, so it looks once the write has failed. The
// connection is not reused. It returns nil when there is none.
func (c *conn) earlyResponse(req *http.Request, ctx context.Context, gzip bool, stop func() bool, werr error) *http.Response {
	if errors.Is(werr, errRequestBody) || ctx.Err() != nil || c.setReadDeadline(ctx, time.Now().Add(time.Second)) != nil {
		return nil
	}
	for informational := 0; informational <= c.lim.MaxHeaderBytes; {
		n, err := c.resp.Parse(c.rbuf[c.r:c.w], &c.lim)
		switch {
		case err == wire.ErrNeedMore:
			if c.fill() != nil {
				return nil
			}
			continue
		case err != nil || c.resp.StatusCode == 101:
			return nil
		case c.resp.StatusCode < 200:
			c.r += n
			informational += n
			continue
		}
		if c.setReadDeadline(ctx, time.Time{}) != nil {
			return nil
		}
		resp, err := c.newResponse(req, n, gzip, true, stop)
		if err != nil {
			return nil
		}
		return resp
	}
	return nil
}

// sendHeldBody writes a body held back for "Expect: 100-continue" and
// restores the header deadline.
func (c *conn) sendHeldBody(ctx context.Context, req *http.Request, chunked bool) error {
	c.wbuf = c.wbuf[:0]
	if err := c.setReadDeadline(ctx, time.Time{}); err != nil {
		return err
	}
	if err := c.writeBody(req, chunked, false); err != nil {
		return err
	}
	if c.t.ResponseHeaderTimeout > 0 {
		_, err := c.headerDeadline(ctx)
		return err
	}
	return nil
}
