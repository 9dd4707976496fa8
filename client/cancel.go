package client

// Request.Cancel: deprecated since Go 1.7, still closed by older code and
// libraries, and honoured by net/http's transport as its context is.

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// ErrRequestCanceled fails a request whose Request.Cancel was closed, at
// whatever stage (net/http's transport has two such errors, unexported).
var ErrRequestCanceled error = errRequestCanceled

const errRequestCanceled = errorString("client: request canceled (Request.Cancel closed)")

// roundTripLegacyCancel runs a request whose Request.Cancel is set under a
// context that Cancel's closing cancels too, as net/http's transport
// does: a goroutine waits for either until the request is over (its
// error, or its response body closed or read to the end).
func (t *Transport) roundTripLegacyCancel(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	go func() {
		select {
		//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point: older code still closes it
		case <-req.Cancel:
			cancel(errRequestCanceled)
		case <-ctx.Done():
		}
	}()
	resp, err := t.roundTrip(req, ctx)
	if err != nil {
		if context.Cause(ctx) == errRequestCanceled {
			err = errRequestCanceled
		} else {
			awaitClientTimer(req)
		}
		cancel(nil)
		return nil, err
	}
	resp.Body = &legacyCancelBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, req: req}
	return resp, nil
}

// awaitClientTimer, for a request whose context's deadline has passed,
// gives Request.Cancel a moment to close. http.Client.Timeout around a
// transport it does not know puts the same deadline on the context and on
// a timer that closes Cancel, and says "Client.Timeout exceeded" only if
// that timer has fired when RoundTrip (or a body's Read) returns; the
// context's timer usually fires first.
func awaitClientTimer(req *http.Request) {
	if req.Context().Err() != context.DeadlineExceeded {
		return
	}
	timer := time.NewTimer(clientTimerGrace)
	select {
	//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point
	case <-req.Cancel:
	case <-timer.C:
	}
	timer.Stop()
}

// clientTimerGrace bounds the wait for http.Client's timer (see
// roundTripLegacyCancel).
const clientTimerGrace = 50 * time.Millisecond

// legacyCancelBody ends a legacy-cancel request's context when its body is done,
// and reports Cancel's closing as errRequestCanceled.
type legacyCancelBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	once   sync.Once
	req    *http.Request
}

func (b *legacyCancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.once.Do(func() { b.cancel(nil) })
	case err != nil && context.Cause(b.ctx) == errRequestCanceled:
		err = errRequestCanceled
	case err != nil:
		awaitClientTimer(b.req)
	}
	return n, err
}

func (b *legacyCancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.cancel(nil) })
	return err
}
