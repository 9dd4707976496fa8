package client

// Request.Cancel: deprecated since Go 1.7, still closed by older code and
// libraries, and honoured by net/http's transport as its context is.

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// errRequestCanceled fails a request whose Request.Cancel was closed.
var errRequestCanceled = errorString("client: request canceled (Request.Cancel closed)")

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
		}
		cancel(nil)
		return nil, err
	}
	resp.Body = &legacyCancelBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel}
	return resp, nil
}

// legacyCancelBody ends a legacy-cancel request's context when its body is done,
// and reports Cancel's closing as errRequestCanceled.
type legacyCancelBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	once   sync.Once
}

func (b *legacyCancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.once.Do(func() { b.cancel(nil) })
	case err != nil && context.Cause(b.ctx) == errRequestCanceled:
		err = errRequestCanceled
	}
	return n, err
}

func (b *legacyCancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.cancel(nil) })
	return err
}
