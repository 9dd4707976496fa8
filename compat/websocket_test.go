package compat_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"
)

// wsNoH2 is why the WebSocket tests skip in h2 mode.
const wsNoH2 = "WebSockets upgrade an HTTP/1.1 connection (101, hijacked); neither library dials over HTTP/2 (RFC 8441 extended CONNECT)"

// wsMessage is one message of the echo scenario.
type wsMessage struct {
	text bool
	data []byte
}

// wsMessages are the 1,000 messages every WebSocket scenario sends:
// text and binary mixed, sizes from 0 to 64 KiB spread evenly on a log
// scale (so most are small, as in real traffic) with the frame-length
// boundaries (125/126, 65535/65536) among them.
var wsMessages = sync.OnceValue(func() []wsMessage {
	r := rand.New(rand.NewPCG(3, 4))
	fixed := []int{0, 1, 125, 126, 127, 65535, 65536, 0}
	msgs := make([]wsMessage, 1000)
	for i := range msgs {
		n := int(math.Pow(65537, r.Float64())) - 1
		if i < len(fixed) {
			n = fixed[i]
		}
		m := wsMessage{text: i%3 != 0, data: make([]byte, n)}
		off := (i * 977) % len(patternBlock)
		for j := range m.data {
			b := patternBlock[(off+j)%len(patternBlock)]
			if m.text {
				b = 'a' + b%26
			}
			m.data[j] = b
		}
		msgs[i] = m
	}
	return msgs
})

// wsMessagesSum hashes the messages with their types, as echoed.
func wsMessagesSum(msgs []wsMessage) string {
	h := sha256.New()
	for _, m := range msgs {
		fmt.Fprintf(h, "%v %d:", m.text, len(m.data))
		h.Write(m.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The points of the scenario where the client pings the server, asks the
// server to ping it, and where it asks the server to close.
const (
	wsClientPingAt = 500
	wsServerPingAt = 700
)

// wsUpgradeSummary is what a client sees of the upgrade response.
func wsUpgradeSummary(resp *http.Response) string {
	if resp == nil {
		return "no upgrade response"
	}
	return fmt.Sprintf("upgrade: %d Upgrade=%q Connection=%q Sec-Websocket-Protocol=%q X-Upgrade=%q",
		resp.StatusCode, resp.Header.Get("Upgrade"), resp.Header.Get("Connection"),
		resp.Header.Get("Sec-Websocket-Protocol"), resp.Header.Get("X-Upgrade"))
}

// wsWant is what every WebSocket scenario must show on both engines.
func wsWant(clientClose, serverClose string) []string {
	return []string{
		`upgrade: 101 Upgrade="websocket" Connection="Upgrade" Sec-Websocket-Protocol="echo.v1" X-Upgrade="yes"`,
		fmt.Sprintf("echoed 1000 messages, 0 wrong, sha256 %s", wsMessagesSum(wsMessages())),
		`client got pong "client-ping"`,
		`server got pong "server-ping"`,
		clientClose,
		serverClose,
	}
}

// gorillaEcho is a gorilla/websocket echo server: it echoes every
// message, answers pings (recording them), pings the client when asked
// ("ping-me"), and closes with 4000 "server done" when asked
// ("close-me"), then reads the client's close. What it saw goes to seen
// when it returns.
func gorillaEcho(seen chan<- []string) http.Handler {
	up := websocket.Upgrader{Subprotocols: []string{"echo.v1"}, ReadBufferSize: 4096, WriteBufferSize: 4096}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		defer func() { seen <- lines }()
		conn, err := up.Upgrade(w, r, http.Header{"X-Upgrade": {"yes"}})
		if err != nil {
			lines = append(lines, "upgrade failed: "+err.Error())
			return
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		conn.SetPongHandler(func(s string) error {
			lines = append(lines, fmt.Sprintf("server got pong %q", s))
			return nil
		})
		for {
			mt, data, err := conn.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					lines = append(lines, fmt.Sprintf("server got close %d %q", ce.Code, ce.Text))
				} else {
					lines = append(lines, "server read: "+errString(err))
				}
				return
			}
			switch {
			case mt == websocket.TextMessage && string(data) == "ping-me":
				err = conn.WriteControl(websocket.PingMessage, []byte("server-ping"), time.Now().Add(5*time.Second))
			case mt == websocket.TextMessage && string(data) == "close-me":
				err = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "server done"),
					time.Now().Add(5*time.Second))
			default:
				err = conn.WriteMessage(mt, data)
			}
			if err != nil {
				lines = append(lines, "server write: "+errString(err))
				return
			}
		}
	})
}

// TestGorillaWebSocket upgrades with gorilla/websocket on both engines
// and runs a chat-like session: 1,000 text and binary messages of 0 to 64
// KiB echoed, a ping each way, and a close initiated by the server with a
// code and reason, answered by the client with its own; both sides must
// see what the other sent.
func TestGorillaWebSocket(t *testing.T) {
	skipInH2(t, wsNoH2)
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			seen := make(chan []string, 1)
			base := e.serve(t, gorillaEcho(seen))
			gorillaSession(t, "ws"+strings.TrimPrefix(base, "http")+"/ws", seen, func(l string) { obs.add(e.name, "%s", l) })
			got := strings.Join(obs[e.name], "\n")
			for _, w := range wsWant(`client got close 4000 "server done"`, `server got close 4001 "client ack"`) {
				if !strings.Contains(got, w) {
					t.Errorf("missing %s in:\n%s", w, got)
				}
			}
		})
	}
	obs.compare(t, "session")
}

// gorillaSession is the client side of the gorilla/websocket scenario
// against gorillaEcho at wsURL: it passes what the client saw, then what
// the server saw (from seen), to add, line by line.
func gorillaSession(t *testing.T, wsURL string, seen <-chan []string, add func(string)) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"echo.v1"}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(wsURL, nil)
	add(wsUpgradeSummary(resp))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	var client []string
	conn.SetPongHandler(func(s string) error {
		client = append(client, fmt.Sprintf("client got pong %q", s))
		return nil
	})
	conn.SetCloseHandler(func(code int, text string) error {
		client = append(client, fmt.Sprintf("client got close %d %q", code, text))
		return conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "client ack"),
			time.Now().Add(5*time.Second))
	})
	var echoed []wsMessage
	wrong := 0
	for i, m := range wsMessages() {
		switch i {
		case wsClientPingAt:
			if err := conn.WriteControl(websocket.PingMessage, []byte("client-ping"), time.Now().Add(5*time.Second)); err != nil {
				t.Fatalf("ping: %v", err)
			}
		case wsServerPingAt:
			if err := conn.WriteMessage(websocket.TextMessage, []byte("ping-me")); err != nil {
				t.Fatalf("ping-me: %v", err)
			}
		}
		mt := websocket.BinaryMessage
		if m.text {
			mt = websocket.TextMessage
		}
		if err := conn.WriteMessage(mt, m.data); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		gt, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if gt != mt || !bytes.Equal(data, m.data) {
			wrong++
		}
		echoed = append(echoed, wsMessage{gt == websocket.TextMessage, data})
	}
	client = append(client, fmt.Sprintf("echoed %d messages, %d wrong, sha256 %s", len(echoed), wrong, wsMessagesSum(echoed)))
	if err := conn.WriteMessage(websocket.TextMessage, []byte("close-me")); err != nil {
		t.Fatalf("close-me: %v", err)
	}
	_, _, err = conn.ReadMessage()
	client = append(client, "client read after close: "+errString(err))
	var server []string
	select {
	case server = <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the server handler did not return")
	}
	for _, l := range append(client, server...) {
		add(l)
	}
}

// coderEcho is coder/websocket's version of gorillaEcho: it echoes,
// pings the client when asked (Ping needs the read loop running, so from
// another goroutine), and closes with 4000 "server done" when asked,
// which returns once the client has answered with the same code.
func coderEcho(seen chan<- []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		var pinged chan error
		defer func() {
			if pinged != nil {
				select {
				case err := <-pinged:
					lines = append(lines, "server ping: "+errString(err))
				case <-time.After(5 * time.Second):
					lines = append(lines, "server ping: no pong")
				}
			}
			seen <- lines
		}()
		w.Header().Set("X-Upgrade", "yes")
		c, err := coder.Accept(w, r, &coder.AcceptOptions{Subprotocols: []string{"echo.v1"}})
		if err != nil {
			lines = append(lines, "accept failed: "+err.Error())
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				lines = append(lines, fmt.Sprintf("server read: status %d: %s", coder.CloseStatus(err), errString(err)))
				return
			}
			switch {
			case typ == coder.MessageText && string(data) == "ping-me":
				pinged = make(chan error, 1)
				go func() { pinged <- c.Ping(ctx) }()
			case typ == coder.MessageText && string(data) == "close-me":
				lines = append(lines, "server close handshake: "+errString(c.Close(4000, "server done")))
				return
			default:
				err = c.Write(ctx, typ, data)
			}
			if err != nil {
				lines = append(lines, "server write: "+errString(err))
				return
			}
		}
	})
}

// TestCoderWebSocket is TestGorillaWebSocket with coder/websocket on
// both ends: the same 1,000 messages, a ping each way (Ping waits for its
// pong), and a close by the server that completes its handshake.
func TestCoderWebSocket(t *testing.T) {
	skipInH2(t, wsNoH2)
	obs := observed{}
	msgs := wsMessages()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			seen := make(chan []string, 1)
			base := e.serve(t, coderEcho(seen))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, resp, err := coder.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws",
				&coder.DialOptions{Subprotocols: []string{"echo.v1"}})
			obs.add(e.name, "%s", wsUpgradeSummary(resp))
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.CloseNow()
			c.SetReadLimit(1 << 20)
			// A reader goroutine, so that the client's Ping sees its pong.
			type read struct {
				typ  coder.MessageType
				data []byte
				err  error
			}
			reads := make(chan read, 1)
			go func() {
				for {
					typ, data, err := c.Read(ctx)
					reads <- read{typ, data, err}
					if err != nil {
						return
					}
				}
			}()
			var client []string
			var echoed []wsMessage
			wrong := 0
			for i, m := range msgs {
				switch i {
				case wsClientPingAt:
					err := c.Ping(ctx)
					if err != nil {
						t.Fatalf("ping: %v", err)
					}
					client = append(client, `client got pong "client-ping"`) // Ping returned: its pong came
				case wsServerPingAt:
					if err := c.Write(ctx, coder.MessageText, []byte("ping-me")); err != nil {
						t.Fatalf("ping-me: %v", err)
					}
				}
				typ := coder.MessageBinary
				if m.text {
					typ = coder.MessageText
				}
				if err := c.Write(ctx, typ, m.data); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				rd := <-reads
				if rd.err != nil {
					t.Fatalf("read %d: %v", i, rd.err)
				}
				if rd.typ != typ || !bytes.Equal(rd.data, m.data) {
					wrong++
				}
				echoed = append(echoed, wsMessage{rd.typ == coder.MessageText, rd.data})
			}
			client = append(client, fmt.Sprintf("echoed %d messages, %d wrong, sha256 %s", len(echoed), wrong, wsMessagesSum(echoed)))
			if err := c.Write(ctx, coder.MessageText, []byte("close-me")); err != nil {
				t.Fatalf("close-me: %v", err)
			}
			rd := <-reads
			var ce coder.CloseError
			if errors.As(rd.err, &ce) {
				client = append(client, fmt.Sprintf("client got close %d %q", ce.Code, ce.Reason))
			} else {
				client = append(client, "client read after close-me: "+errString(rd.err))
			}
			var server []string
			select {
			case server = <-seen:
			case <-time.After(10 * time.Second):
				t.Fatal("the server handler did not return")
			}
			for _, l := range append(client, server...) {
				obs.add(e.name, "%s", l)
			}
			got := strings.Join(obs[e.name], "\n")
			want := wsWant(`client got close 4000 "server done"`, "server close handshake: <nil>")
			want = append(want[:3], want[4:]...) // the server's Ping waits for the pong: "server ping: <nil>"
			want = append(want, "server ping: <nil>")
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %s in:\n%s", w, got)
				}
			}
		})
	}
	obs.compare(t, "session")
}
