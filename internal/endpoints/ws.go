package endpoints

import (
	"context"
	"net/http"
	"time"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/websocket"
)

// /ws: a WebSocket echo (text and binary, every message sent back as it
// came), with the event API, so that an idle connection costs the
// server no goroutine: for Autobahn's fuzzing client, a browser, or
// hotpath's own bench; over HTTP/1.1, and over HTTP/2 where the server
// allows RFC 8441's extended CONNECT (hotpath serve does). Any Origin is accepted: an echo holds nothing a
// page from another site could misuse. permessage-deflate is accepted
// when offered (Autobahn sections 12 and 13, browsers), and then every
// message is echoed compressed, as it most likely came: kosoku, the
// Autobahn runner, errors on an uncompressed echo in those sections.
// Context takeover is kept both ways where the client allows it
// (ClientContextTakeover, ServerContextTakeover), so that those sections,
// and browsers, exercise it.
var wsOptions = &websocket.AcceptOptions{SkipOriginCheck: true, Compression: true, ClientContextTakeover: true, ServerContextTakeover: true, Options: websocket.Options{CompressionThreshold: -1}}

// wsWriteTimeout bounds an echo's write to a peer that stopped reading.
const wsWriteTimeout = 10 * time.Second

type wsEcho struct{}

func (wsEcho) OnMessage(c *websocket.Conn, typ websocket.MessageType, msg []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
	c.Write(ctx, typ, msg)
	cancel()
}

func (wsEcho) OnClose(*websocket.Conn, error) {}

func nativeWS(x *server.Ctx) {
	if c, err := websocket.AcceptNative(x, wsOptions); err == nil {
		c.Start(wsEcho{})
	}
}

func handlerWS(w http.ResponseWriter, r *http.Request) {
	if c, err := websocket.Accept(w, r, wsOptions); err == nil {
		c.Start(wsEcho{})
	}
}
