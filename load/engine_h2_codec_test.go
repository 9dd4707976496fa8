package load

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// The fast engine's HTTP/2 on wire/h2's client half (ClientStreams,
// PeerSettings), where it used to differ from the client's.

// TestH2EngineUnopenedStream: a frame on a stream the client never opened
// is a connection error (§5.1), as the client has it: the connection
// fails, its request with it, and the run goes on on a new one. (The
// engine used to drop such frames as if the stream had ended.)
func TestH2EngineUnopenedStream(t *testing.T) {
	url, _ := rawH2(t, nil, func(conn, k int, _ uint32) string {
		if conn == 0 && k == 3 {
			return "stray"
		}
		return "ok"
	})
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Streams: 1, Requests: 20})
	if res.Requests != 19 || res.Errors != 1 || res.ErrorsByKind["bad_response"] != 1 || res.Conns.Opened != 2 {
		t.Errorf("DATA on stream 2 with the 4th request: responses %d errors %v opened %d; want 19, one bad_response, 2 connections", res.Requests, res.ErrorsByKind, res.Conns.Opened)
	}
}

// TestH2EngineSettingsLeftAlone: the server's HEADER_TABLE_SIZE and
// MAX_HEADER_LIST_SIZE go through PeerSettings like the others, and keep
// load's behaviour: its blocks, with no dynamic table and a size update
// to 0 first, decode under a table of 0 bytes, and a request over the
// advisory list size still goes (what the server answers is measured).
func TestH2EngineSettingsLeftAlone(t *testing.T) {
	settings := []h2.Setting{{ID: h2.SettingHeaderTableSize, Val: 0}, {ID: h2.SettingMaxHeaderListSize, Val: 64}}
	url, stats := rawH2(t, settings, func(int, int, uint32) string { return "ok" })
	hdr := http.Header{"X-Long": {strings.Repeat("a", 200)}}
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Streams: 2, Requests: 20, Header: hdr})
	if res.Requests != 20 || res.Errors != 0 || stats.badBlocks.Load() != 0 || stats.requests.Load() != 20 {
		t.Errorf("HEADER_TABLE_SIZE 0, MAX_HEADER_LIST_SIZE 64: responses %d errors %v, server saw %d requests, refused %d blocks; want 20, none, 20, 0",
			res.Requests, res.ErrorsByKind, stats.requests.Load(), stats.badBlocks.Load())
	}
}

// TestH2EngineRefusedAfterHead: REFUSED_STREAM after the response head
// is a reset like any other, not a request the server left unprocessed
// (§8.7), as the client has it: it is not sent again. (The engine used to
// send it again.)
func TestH2EngineRefusedAfterHead(t *testing.T) {
	refused := "head+rst:" + strconv.Itoa(int(h2.ErrCodeRefusedStream))
	url, stats := rawH2(t, nil, func(_, k int, _ uint32) string {
		if k%4 == 3 {
			return refused
		}
		return "ok"
	})
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Requests: 40})
	if res.Requests != 30 || res.ErrorsByKind["reset"] != 10 || stats.requests.Load() != 40 {
		t.Errorf("every 4th stream refused after its head: responses %d errors %v, server saw %d requests; want 30, 10 resets, 40 (none sent again)", res.Requests, res.ErrorsByKind, stats.requests.Load())
	}
}
