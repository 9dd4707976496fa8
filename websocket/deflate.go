package websocket

import (
	"bytes"
	"compress/flate"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// permessage-deflate (RFC 7692). This end compresses each message on its
// own (no context takeover): a connection keeps no compressor or
// decompressor between messages, both come from pools for the length of
// one message. A server answers every offer it accepts with
// server_no_context_takeover (§7.1.1: a server may include it whatever
// the offer says), and with client_no_context_takeover unless
// AcceptOptions.ClientContextTakeover lets the client keep its context.
// An end whose peer keeps its context (a client whose server answered
// without server_no_context_takeover, a server with
// ClientContextTakeover) keeps the last 32 KiB of what it inflated, the
// window the next message may refer back into; the decompressor still
// comes from the pool, primed with it.

// DefaultCompressionThreshold is the CompressionThreshold used when it is
// zero: shorter messages are sent uncompressed.
const DefaultCompressionThreshold = 128

// deflateTail ends every compressed message: the empty stored block a
// sync flush writes, which the sender removes and the reader puts back
// (RFC 7692 §7.2.1, §7.2.2).
var deflateTail = [4]byte{0x00, 0x00, 0xff, 0xff}

// inflateTail is what the reader appends: deflateTail, then an empty
// final stored block, so that the decompressor ends with io.EOF rather
// than wait for a block header past the input.
var inflateTail = [9]byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// maxWindow is the largest LZ77 window, 2^15 bytes.
const maxWindow = 1 << 15

// negotiated is what the handshake agreed on for one connection.
type negotiated struct {
	on        bool
	window    int  // the window the peer allows this end's compressor, in bytes; 0: 32 KiB
	takeover  bool // the peer compresses with context takeover: keep history between messages
	keepSent  bool // this end compresses with context takeover: keep sent between messages
	threshold int
	history   []byte // with takeover, the last 32 KiB inflated
	sent      []byte // with keepSent, the last sentWindow bytes this end sent compressed
}

// sentWindow is how much of what it sent a server with
// ServerContextTakeover keeps as its context: each compressed message is
// compressed after these bytes, primed into a pooled compressor, so it
// may refer back into them. 4 KiB catches what repeats between messages
// of a stream (field names, ids, phrases) at a cost in CPU of priming
// them (a few µs per KiB) and 4 KiB per connection.
const sentWindow = 4 << 10

// errInflate is the failure of a compressed message that does not
// inflate.
var errInflate = &ws.Error{Code: ws.CloseInvalidPayload, Reason: "compressed message does not inflate (RFC 7692 §6.2)"}

// acceptDeflate picks the first permessage-deflate offer of the request
// this server accepts and returns the answer's element, or nil. With
// clientTakeover, a client that allows context takeover keeps it.
func acceptDeflate(h http.Header, on, clientTakeover, serverTakeover bool) (negotiated, []byte) {
	if !on {
		return negotiated{}, nil
	}
	var list []byte
	for _, v := range h.Values("Sec-WebSocket-Extensions") {
		if len(list) > 0 {
			list = append(list, ',')
		}
		list = append(list, v...)
	}
	d, ok, err := ws.FirstDeflateOffer(list)
	if err != nil || !ok {
		return negotiated{}, nil
	}
	n := negotiated{on: true}
	ans := ws.Deflate{ServerNoContextTakeover: true, ClientNoContextTakeover: true}
	if clientTakeover && !d.ClientNoContextTakeover {
		// The client compresses with the context of its earlier
		// messages: what it sent is kept to inflate the next (a window
		// of 32 KiB at most, whatever client_max_window_bits says).
		ans.ClientNoContextTakeover = false
		n.takeover = true
	}
	if serverTakeover && !d.ServerNoContextTakeover && d.ServerMaxWindowBits == 0 {
		// This end compresses each message after its last sentWindow
		// bytes sent: the back-references reach no further than that
		// plus the message, within the 32 KiB the client keeps.
		ans.ServerNoContextTakeover = false
		n.keepSent = true
	}
	if d.ServerMaxWindowBits != 0 && d.ServerMaxWindowBits < 15 {
		// Accepted: a message is compressed in pieces of 2^N bytes,
		// each on its own (see deflate).
		ans.ServerMaxWindowBits = d.ServerMaxWindowBits
		n.window = 1 << d.ServerMaxWindowBits
	}
	return n, ws.AppendDeflate(nil, ans)
}

// deflateOffer is what Dial offers with Compression: no context takeover
// either way, and client_max_window_bits, as any window the server asks
// for is kept (a message compressed in pieces of it).
var deflateOffer = string(ws.AppendDeflate(nil, ws.Deflate{ClientNoContextTakeover: true, ServerNoContextTakeover: true, ClientMaxWindowBitsParam: true}))

// deflateTakeoverOffer is what Dial offers with ContextTakeover: a
// browser's offer, context takeover allowed both ways.
var deflateTakeoverOffer = string(ws.AppendDeflate(nil, ws.Deflate{ClientMaxWindowBitsParam: true}))

// checkDeflateAnswer reads a server's Sec-WebSocket-Extensions answer to
// deflateOffer, or to deflateTakeoverOffer with takeover (offered tells
// whether either was sent): nothing, or one permessage-deflate element
// valid for the offer (RFC 7692 §5, §7.1: no unknown or repeated
// parameter, client_max_window_bits with a value). Anything else fails
// the handshake.
func checkDeflateAnswer(h http.Header, offered, takeover bool) (negotiated, error) {
	vals := h.Values("Sec-WebSocket-Extensions")
	var list []byte
	for _, v := range vals {
		if len(list) > 0 {
			list = append(list, ',')
		}
		list = append(list, v...)
	}
	name, params, rest, err := ws.NextExtension(list)
	if err != nil {
		return negotiated{}, errBadExtensions(list, err.Error())
	}
	if name == nil {
		return negotiated{}, nil
	}
	if !offered || !strings.EqualFold(string(name), ws.DeflateName) {
		return negotiated{}, errBadExtensions(list, "not offered")
	}
	if n, _, _, err := ws.NextExtension(rest); err != nil || n != nil {
		return negotiated{}, errBadExtensions(list, "more than one extension")
	}
	d, err := ws.ParseDeflate(params)
	if err != nil {
		return negotiated{}, errBadExtensions(list, err.Error())
	}
	if d.ClientMaxWindowBitsParam && d.ClientMaxWindowBits == 0 {
		return negotiated{}, errBadExtensions(list, "client_max_window_bits without a value (RFC 7692 §7.1.2.2)")
	}
	// Without takeover this end compresses each message on its own,
	// whatever the answer says (it offered client_no_context_takeover,
	// which the server must keep). With it, it keeps its context unless
	// the server says not to or asks for a smaller window (kept by
	// compressing in pieces, each on its own).
	n := negotiated{on: true, takeover: !d.ServerNoContextTakeover}
	if d.ClientMaxWindowBits != 0 && d.ClientMaxWindowBits < 15 {
		n.window = 1 << d.ClientMaxWindowBits
	}
	n.keepSent = takeover && !d.ClientNoContextTakeover && n.window == 0
	return n, nil
}

func errBadExtensions(list []byte, why string) error {
	return &extensionError{list: string(list), why: why}
}

type extensionError struct{ list, why string }

func (e *extensionError) Error() string {
	return "websocket: the server answered with extensions \"" + e.list + "\": " + e.why + " (RFC 6455 §4.1, RFC 7692 §5)"
}

// inflater is a pooled decompressor with the reader it reads from.
type inflater struct {
	src bytes.Reader
	fr  io.ReadCloser
}

var inflatePool = sync.Pool{New: func() any {
	f := &inflater{}
	f.fr = flate.NewReader(&f.src)
	return f
}}

// inflate decompresses a message's payload (which inflate may modify:
// the tail is appended to it) and appends it to dst, at most limit bytes
// (negative: no limit), growing dst no further than the limit: a message
// that inflates past it is ErrMessageTooLarge, one that does not inflate
// errInflate, and text that is not UTF-8 ErrInvalidUTF8. hist, when not
// nil, is the peer's context (the last 32 KiB inflated), updated.
func (rd *reader) inflate(dst, payload []byte, text bool, hist *[]byte) ([]byte, error) {
	payload = append(payload, inflateTail[:]...)
	f := inflatePool.Get().(*inflater)
	defer inflatePool.Put(f)
	f.src.Reset(payload)
	var dict []byte
	if hist != nil {
		dict = *hist
	}
	if err := f.fr.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return nil, errInflate
	}
	limit := rd.asm.MaxMessage
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			grow := max(cap(dst)-start, 512)
			if limit >= 0 {
				// One byte past the limit shows a message too large.
				grow = int(min(int64(grow), limit+1-int64(len(dst)-start)))
			}
			dst = slices.Grow(dst, grow)
		}
		n, err := f.fr.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if limit >= 0 && int64(len(dst)-start) > limit {
			return nil, ws.ErrMessageTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errInflate
		}
	}
	msg := dst[start:]
	if text && !utf8.Valid(msg) {
		return nil, ws.ErrInvalidUTF8
	}
	if hist != nil {
		*hist = keepWindow(*hist, msg, maxWindow)
	}
	return dst, nil
}

// keepWindow returns hist with msg appended and cut to its last size
// bytes: the window the next message may refer back into. It reuses
// hist's array, growing it as the window fills, never past size.
func keepWindow(hist, msg []byte, size int) []byte {
	if len(msg) >= size {
		msg = msg[len(msg)-size:]
		hist = hist[:0]
	}
	if over := len(hist) + len(msg) - size; over > 0 {
		hist = hist[:copy(hist, hist[over:])]
	}
	if need := len(hist) + len(msg); need > cap(hist) {
		grown := make([]byte, len(hist), min(size, max(need, 2*cap(hist))))
		copy(grown, hist)
		hist = grown
	}
	return append(hist, msg...)
}

// compressed reads the rest of a compressed message whose first frame
// step read, and appends it, inflated, to dst.
func (rd *reader) compressedMessage(dst []byte) ([]byte, error) {
	bp := msgPool.Get().(*[]byte)
	raw, err := appendMessage((*bp)[:0], rd.data)
	if err != nil {
		return nil, err
	}
	var hist *[]byte
	if d := rd.c.negotiatedDeflate(); d != nil && d.takeover {
		hist = &d.history
	}
	out, err := rd.inflate(dst, raw, rd.op == ws.OpText, hist)
	if cap(raw) <= maxPooledMsg {
		*bp = raw[:0]
		msgPool.Put(bp)
	}
	if err != nil {
		return nil, rd.failed(err)
	}
	return out, nil
}

// deflater is a pooled compressor writing into buf (or nowhere, while
// it is primed with a context).
type deflater struct {
	buf     []byte
	fw      *flate.Writer
	discard bool
}

func (d *deflater) Write(p []byte) (int, error) {
	if !d.discard {
		d.buf = append(d.buf, p...)
	}
	return len(p), nil
}

var deflatePool = sync.Pool{New: func() any {
	d := &deflater{}
	d.fw, _ = flate.NewWriter(d, flate.BestSpeed)
	return d
}}

// deflateOutPool holds the buffers deflate's output goes to: they leave
// the compressor before the output is sent, so that a send that waits
// (a peer that stopped reading) holds its bytes but not a compressor
// (flate.Writer: about 1.2 MB).
var deflateOutPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxPooledDeflate: an output buffer that grew past this is dropped.
const maxPooledDeflate = 64 << 10

// deflate compresses p as one message (RFC 7692 §7.2.1: a sync flush,
// its empty block's four bytes removed) and calls send with the result.
// With a window (the peer's server_max_window_bits or
// client_max_window_bits, in bytes), p is compressed in pieces of that
// size, the compressor reset before each: no back-reference reaches
// further than the window, and the sync-flushed pieces concatenated are
// one deflate stream. With a context (context takeover: what this end
// sent compressed before, which the peer's window holds), the compressor
// first compresses the context with its output discarded, so that p may
// refer back into it. Unless always, it reports false, sending nothing,
// when compressing does not make p shorter. The compressor goes back to
// its pool before send is called.
func deflate(p, context []byte, window int, always bool, send func([]byte) error) (bool, error) {
	bp := deflateOutPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledDeflate {
			deflateOutPool.Put(bp)
		}
	}()
	d := deflatePool.Get().(*deflater)
	d.buf = (*bp)[:0]
	if window <= 0 || window >= maxWindow {
		window = max(len(p), 1)
	}
	for rest := p; ; {
		k := min(len(rest), window)
		d.fw.Reset(d)
		if len(context) > 0 {
			d.discard = true
			d.fw.Write(context)
			d.fw.Flush()
			d.discard = false
		}
		d.fw.Write(rest[:k])
		d.fw.Flush()
		if rest = rest[k:]; len(rest) == 0 {
			break
		}
	}
	out := d.buf
	*bp, d.buf = out[:0], nil
	deflatePool.Put(d)
	if len(out) < 4 || !bytes.Equal(out[len(out)-4:], deflateTail[:]) {
		return false, nil // cannot happen with compress/flate's sync flush
	}
	out = out[:len(out)-4]
	if !always && len(out) >= len(p) {
		return false, nil
	}
	return true, send(out)
}
