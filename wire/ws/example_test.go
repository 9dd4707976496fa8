package ws_test

import (
	"errors"
	"fmt"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// A server reads what a client sent: a text message in two fragments with
// a ping between them, then a close frame. Each frame's header is parsed
// in place, its payload unmasked in place, the text checked as it comes,
// and the replies appended to one output buffer.
func Example() {
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	var in []byte
	in = ws.AppendClientFrame(in, ws.OpText, false, key, []byte("Hello, "))
	in = ws.AppendClientFrame(in, ws.OpPing, true, key, []byte("are you there?"))
	in = ws.AppendClientFrame(in, ws.OpContinuation, true, key, []byte("κόσμε"))
	in = ws.AppendClientFrame(in, ws.OpClose, true, key, ws.AppendClose(nil, ws.CloseNormal, "bye"))

	rules := ws.Rules{Role: ws.Server, MaxPayload: 1 << 20}
	var msgs ws.Assembler // one per connection
	var text ws.UTF8
	var message, out []byte
	for len(in) > 0 {
		h, n, err := ws.ParseHeader(in, rules)
		if err == ws.ErrNeedMore || (err == nil && int64(len(in)-n) < h.Length) {
			break // read more, then parse again from the same place
		}
		var op ws.Opcode // the message the payload belongs to
		if err == nil {
			op, err = msgs.Frame(h)
		}
		var e *ws.Error
		if errors.As(err, &e) { // fail the connection with the error's code
			out = ws.AppendServerFrame(out, ws.OpClose, true, ws.AppendClose(nil, e.Code, e.Reason))
			break
		}
		payload := in[n : n+int(h.Length)]
		ws.Mask(h.Mask, 0, payload)
		in = in[n+int(h.Length):]

		switch op {
		case ws.OpPing:
			out = ws.AppendServerFrame(out, ws.OpPong, true, payload)
			fmt.Printf("ping %q\n", payload)
		case ws.OpClose:
			code, reason, err := ws.ParseClose(payload)
			fmt.Println("close", code, string(reason), err)
			out = ws.AppendServerFrame(out, ws.OpClose, true, ws.AppendClose(nil, code, ""))
		case ws.OpText:
			if !text.Write(payload) {
				fmt.Println("fail with", ws.ErrInvalidUTF8.Code)
				return
			}
			message = append(message, payload...)
			if h.Fin {
				fmt.Printf("text %q, valid %v\n", message, text.Done())
				text.Reset()
				message = message[:0]
			}
		}
	}
	fmt.Printf("reply % x\n", out)
	// Output:
	// ping "are you there?"
	// text "Hello, κόσμε", valid true
	// close 1000 bye <nil>
	// reply 8a 0e 61 72 65 20 79 6f 75 20 74 68 65 72 65 3f 88 02 03 e8
}

// The server's side of the opening handshake: the accept key for the
// client's key, and the permessage-deflate offer to answer.
func ExampleAcceptKey() {
	key := []byte("dGhlIHNhbXBsZSBub25jZQ==") // Sec-WebSocket-Key
	if !ws.ValidKey(key) {
		fmt.Println("400 Bad Request")
		return
	}
	fmt.Println("Sec-WebSocket-Accept:", ws.AcceptKey(string(key)))

	offers := []byte("permessage-deflate; client_max_window_bits, permessage-deflate")
	if d, ok, err := ws.FirstDeflateOffer(offers); ok && err == nil {
		answer := ws.Deflate{ServerNoContextTakeover: true, ClientNoContextTakeover: true}
		if d.ClientMaxWindowBitsParam {
			answer.ClientMaxWindowBits = 10 // a smaller window for the client's compressor
		}
		fmt.Printf("Sec-WebSocket-Extensions: %s\n", ws.AppendDeflate(nil, answer))
	}
	// Output:
	// Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=
	// Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits=10
}

// A payload that arrives in pieces is unmasked piece by piece, the
// position carried from one to the next.
func ExampleMask() {
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	payload := []byte{0x7f, 0x9f, 0x4d, 0x51, 0x58} // RFC 6455 §5.7's masked "Hello"
	pos := ws.Mask(key, 0, payload[:2])
	ws.Mask(key, pos, payload[2:])
	fmt.Printf("%s\n", payload)
	// Output: Hello
}
