package websocket_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/websocket"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// Accept in an http.Handler: a handshake that is not valid has been
// answered with a 4xx when Accept returns its error.
func ExampleAccept() {
	http.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"chat.v1"}})
		if err != nil {
			log.Print(err)
			return
		}
		defer c.CloseNow()
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		if err := c.Write(ctx, websocket.MessageText, []byte("welcome")); err != nil {
			return
		}
		c.Close(ws.CloseNormal, "")
	})
}

// Dial a server, send a message, read the answer, close.
func ExampleDial() {
	srv := httptest.NewServer(echo(nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
		log.Fatal(err)
	}
	typ, msg, err := c.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(typ, string(msg))
	fmt.Println(c.Close(ws.CloseNormal, "done"))
	// Output:
	// text hello
	// <nil>
}

// An echo loop: read each message whole and send it back, until the
// peer closes (Read's error is then a *CloseError).
func Example_echo() {
	ended := make(chan string, 1)
	srv := httptest.NewServer(echo(ended))
	defer srv.Close()
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []string{"one", "two"} {
		c.Write(ctx, websocket.MessageBinary, []byte(m))
		_, got, _ := c.Read(ctx)
		fmt.Println(string(got))
	}
	c.Close(4000, "bye")
	fmt.Println(<-ended)
	// Output:
	// one
	// two
	// websocket: closed by the peer: 4000 bye (close status 4000)
}

// echo is an echo handler; how the connection ended goes to ended.
func echo(ended chan<- string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { echoLoop(w, r, ended) }
}

func echoLoop(w http.ResponseWriter, r *http.Request, ended chan<- string) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	for {
		typ, msg, err := c.Read(r.Context())
		if err != nil {
			if ended != nil {
				ended <- fmt.Sprintf("%v (close status %d)", err, websocket.CloseStatus(err))
			}
			return
		}
		if err := c.Write(r.Context(), typ, msg); err != nil {
			return
		}
	}
}

// chatRoom is an EventHandler: it echoes each message in upper case and
// reports how each connection ended.
type chatRoom struct{ ended chan string }

func (h chatRoom) OnMessage(c *websocket.Conn, typ websocket.MessageType, msg []byte) {
	// msg is valid during the call only; Write is done with it on return.
	c.Write(context.Background(), typ, []byte(strings.ToUpper(string(msg))))
}

func (h chatRoom) OnClose(c *websocket.Conn, err error) {
	h.ended <- fmt.Sprintf("ended: %d", websocket.CloseStatus(err))
}

// The event API: the handler hands the connection to an EventHandler and
// returns. Between messages the connection holds no goroutine and no
// read buffer: it waits in a readiness set until data comes.
func ExampleConn_Start() {
	room := chatRoom{ended: make(chan string, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Start(room) // returns at once; so does the handler
	}))
	defer srv.Close()
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
	if err != nil {
		log.Fatal(err)
	}
	c.Write(ctx, websocket.MessageText, []byte("hello"))
	_, got, _ := c.Read(ctx)
	fmt.Println(string(got))
	c.Close(ws.CloseNormal, "")
	fmt.Println(<-room.ended)
	// Output:
	// HELLO
	// ended: 1000
}

// A broadcast that no slow reader can hold up: each connection queues at
// most SendQueue bytes, and under SendFail a full queue is an error at
// once (here, the reader is dropped) instead of a wait.
func ExampleConn_SendPrepared() {
	var (
		mu   sync.Mutex
		room = map[*websocket.Conn]bool{}
	)
	http.HandleFunc("/room", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Options: websocket.Options{
			SendQueue:     64 << 10,
			SendQueueFull: websocket.SendFail,
		}})
		if err != nil {
			return
		}
		mu.Lock()
		room[c] = true
		mu.Unlock()
	})
	broadcast := func(msg []byte) {
		pm, err := websocket.NewPreparedMessage(websocket.MessageText, msg)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for c := range room {
			if err := c.SendPrepared(context.Background(), pm); err != nil {
				// ErrSendQueueFull: too slow; anything else: gone.
				delete(room, c)
				go c.Close(ws.ClosePolicyViolation, "too slow")
			}
		}
	}
	broadcast([]byte("hello, room"))
}
