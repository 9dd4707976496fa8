package compat_test

// connect-go without protoc: connect's generic handlers and clients carry
// any Go type given a codec, so the RPCs here exchange plain structs
// through a JSON codec (connect.WithCodec, named "json" like connect's
// own protojson one). The protocols' framing, headers, trailers and
// error encoding are connect's own and the same as with protobuf
// messages; only the payload encoding differs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
)

type pingRequest struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
	Fail  bool   `json:"fail"`
}

type pingResponse struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// jsonCodec marshals plain Go values with encoding/json.
type jsonCodec struct{}

func (jsonCodec) Name() string                    { return "json" }
func (jsonCodec) Marshal(v any) ([]byte, error)   { return json.Marshal(v) }
func (jsonCodec) Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

const (
	pingProcedure  = "/compat.v1.PingService/Ping"
	countProcedure = "/compat.v1.PingService/Count"
)

// connectService is a connect service with a unary RPC and a
// server-streaming one. Each can fail with a code and message on
// request. The stream sends a message only once the client says it has
// the previous one (next), so it works only if each message is flushed.
func connectService(next <-chan struct{}) http.Handler {
	opts := []connect.HandlerOption{connect.WithCodec(jsonCodec{})}
	mux := http.NewServeMux()
	mux.Handle(pingProcedure, connect.NewUnaryHandler(pingProcedure,
		func(ctx context.Context, req *connect.Request[pingRequest]) (*connect.Response[pingResponse], error) {
			if req.Msg.Fail {
				err := connect.NewError(connect.CodeFailedPrecondition, errors.New("ping refused: "+req.Msg.Text))
				err.Meta().Set("X-Reason", "asked to fail")
				return nil, err
			}
			res := connect.NewResponse(&pingResponse{Text: "pong: " + req.Msg.Text})
			res.Header().Set("X-Pong", "header")
			res.Trailer().Set("X-Pong-Trailer", "trailer")
			return res, nil
		}, opts...))
	mux.Handle(countProcedure, connect.NewServerStreamHandler(countProcedure,
		func(ctx context.Context, req *connect.Request[pingRequest], stream *connect.ServerStream[pingResponse]) error {
			stream.ResponseHeader().Set("X-Count", "header")
			for i := range req.Msg.Count {
				if i > 0 {
					select {
					case <-next:
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(5 * time.Second):
						return connect.NewError(connect.CodeDeadlineExceeded, fmt.Errorf("the client never got message %d", i-1))
					}
				}
				if err := stream.Send(&pingResponse{Text: req.Msg.Text, N: i}); err != nil {
					return err
				}
			}
			stream.ResponseTrailer().Set("X-Count-Trailer", "trailer")
			if req.Msg.Fail {
				return connect.NewError(connect.CodeResourceExhausted, errors.New("no more counting"))
			}
			return nil
		}, opts...))
	return mux
}

// connectError describes an RPC's error as a client sees it.
func connectError(err error) string {
	if err == nil {
		return "no error"
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return "error " + errString(err)
	}
	return fmt.Sprintf("error code %s message %q X-Reason=%q", ce.Code(), ce.Message(), ce.Meta().Get("X-Reason"))
}

// TestConnect calls a connect service on both engines with each of
// connect's three protocols over HTTP/1.1 (h2c in h2 mode): Connect,
// gRPC-Web, and gRPC (which needs HTTP trailers for grpc-status): a unary
// call, a unary call that fails with a code and message, a server stream
// of three messages received one by one, and a stream that ends with an
// error. Both engines must give the clients the same messages, headers,
// trailers and errors.
func TestConnect(t *testing.T) {
	protocols := []struct {
		name string
		opt  []connect.ClientOption
	}{
		{"Connect", nil},
		{"gRPC-Web", []connect.ClientOption{connect.WithGRPCWeb()}},
		{"gRPC", []connect.ClientOption{connect.WithGRPC()}},
	}
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			obs := observed{}
			for _, e := range engines {
				t.Run(e.name, func(t *testing.T) {
					next := make(chan struct{}, 8)
					base := e.serve(t, connectService(next))
					// HTTP/1.1 (http:// URLs never negotiate HTTP/2), or
					// h2c with prior knowledge in h2 mode.
					tr := protoTransport(&http.Transport{})
					t.Cleanup(tr.CloseIdleConnections)
					hc := &http.Client{Transport: protoClientCheck(t, tr), Timeout: 10 * time.Second}
					opts := append([]connect.ClientOption{connect.WithCodec(jsonCodec{})}, p.opt...)
					ping := connect.NewClient[pingRequest, pingResponse](hc, base+pingProcedure, opts...)
					count := connect.NewClient[pingRequest, pingResponse](hc, base+countProcedure, opts...)
					ctx := t.Context()
					add := func(format string, args ...any) { obs.add(e.name, format, args...) }

					res, err := ping.CallUnary(ctx, connect.NewRequest(&pingRequest{Text: "hello"}))
					if err != nil {
						add("unary: %s", connectError(err))
					} else {
						add("unary: %+v X-Pong=%q X-Pong-Trailer=%q", *res.Msg, res.Header().Get("X-Pong"),
							res.Trailer().Get("X-Pong-Trailer"))
					}
					_, err = ping.CallUnary(ctx, connect.NewRequest(&pingRequest{Text: "please", Fail: true}))
					add("failing unary: %s", connectError(err))

					for _, fail := range []bool{false, true} {
						stream, err := count.CallServerStream(ctx, connect.NewRequest(&pingRequest{Text: "tick", Count: 3, Fail: fail}))
						if err != nil {
							add("stream (fail=%v): %s", fail, connectError(err))
							continue
						}
						var got []string
						for stream.Receive() {
							got = append(got, fmt.Sprintf("%+v", *stream.Msg()))
							next <- struct{}{}
						}
						add("stream (fail=%v): received %s; X-Count=%q X-Count-Trailer=%q; %s", fail, strings.Join(got, " "),
							stream.ResponseHeader().Get("X-Count"), stream.ResponseTrailer().Get("X-Count-Trailer"),
							connectError(stream.Err()))
						stream.Close()
					}

					want := []string{
						`unary: {Text:pong: hello N:0} X-Pong="header" X-Pong-Trailer="trailer"`,
						`failing unary: error code failed_precondition message "ping refused: please" X-Reason="asked to fail"`,
						`stream (fail=false): received {Text:tick N:0} {Text:tick N:1} {Text:tick N:2}; X-Count="header" X-Count-Trailer="trailer"; no error`,
						`stream (fail=true): received {Text:tick N:0} {Text:tick N:1} {Text:tick N:2}; X-Count="header" X-Count-Trailer="trailer"; error code resource_exhausted message "no more counting" X-Reason=""`,
					}
					for i, w := range want {
						if i >= len(obs[e.name]) || obs[e.name][i] != w {
							t.Errorf("call %d:\ngot  %s\nwant %s", i, strings.Join(obs[e.name][i:min(i+1, len(obs[e.name]))], ""), w)
						}
					}
				})
			}
			obs.compare(t, "calls")
		})
	}
}
