package h2

// Flow control (RFC 9113 §5.2, §6.9) limits the DATA a sender may have in
// flight: one window per stream and one for the connection, each starting
// at SETTINGS_INITIAL_WINDOW_SIZE (streams) or 65,535 (the connection,
// §6.9.2), reduced by every DATA frame's whole length, padding included
// (§6.9.1), and raised by WINDOW_UPDATE. A server keeps a [Window] per
// stream and one for the connection on each side: send windows its
// responses must fit, and receive windows ([Inflow]) that the client's
// request bodies must fit.

// DefaultInitialWindowSize is the initial window of every stream until
// SETTINGS_INITIAL_WINDOW_SIZE says otherwise, and of the connection for
// its whole life (§6.5.2, §6.9.2).
const DefaultInitialWindowSize = 65535

// Flow-control errors.
var (
	// ErrConnFlowControl: a DATA frame larger than the connection's receive
	// window (§6.9.1). The data cannot be accounted for: the connection
	// ends.
	ErrConnFlowControl = connError(ErrCodeFlowControl, "DATA exceeds the connection's flow-control window (§6.9.1)")
	// ErrStreamFlowControl: a DATA frame larger than its stream's receive
	// window (§6.9.1). It still counts against the connection's window
	// (§6.9), which the caller credits back since the data is dropped.
	ErrStreamFlowControl = streamError(ErrCodeFlowControl, "DATA exceeds the stream's flow-control window (§6.9.1)")
	// ErrConnWindowOverflow: a WINDOW_UPDATE that takes the connection's
	// send window past 2^31-1 (§6.9.1).
	ErrConnWindowOverflow = connError(ErrCodeFlowControl, "WINDOW_UPDATE takes the connection's flow-control window past 2^31-1 (§6.9.1)")
	// ErrStreamWindowOverflow: a WINDOW_UPDATE that takes a stream's send
	// window past 2^31-1 (§6.9.1).
	ErrStreamWindowOverflow = streamError(ErrCodeFlowControl, "WINDOW_UPDATE takes a stream's flow-control window past 2^31-1 (§6.9.1)")
	// ErrInitialWindowOverflow: a change of SETTINGS_INITIAL_WINDOW_SIZE
	// that takes a stream's send window past 2^31-1, a connection error
	// (§6.9.2).
	ErrInitialWindowOverflow = connError(ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE change takes a stream's flow-control window past 2^31-1 (§6.9.2)")
)

// Window is one flow-control window: how many bytes of DATA may still be
// sent on a stream or on the connection. It knows which of the two it
// belongs to, so that its errors are stream or connection errors as §6.9
// requires. The zero Window is a connection window of size 0; make one
// with [ConnWindow] or [StreamWindow].
//
// A send window may go negative after SETTINGS_INITIAL_WINDOW_SIZE shrinks
// (§6.9.2); nothing may be sent until WINDOW_UPDATE frames bring it back
// above zero. A receive window never goes negative: Consume refuses what
// does not fit.
type Window struct {
	avail  int64
	stream bool
}

// ConnWindow returns the connection's window at its initial size (65,535
// for both sides: SETTINGS never changes it, §6.9.2).
func ConnWindow(size uint32) Window { return Window{avail: int64(min(size, MaxWindowSize))} }

// StreamWindow returns a stream's window at the initial size: the peer's
// SETTINGS_INITIAL_WINDOW_SIZE for a send window, this endpoint's for a
// receive window. A size past 2^31-1 (which a SETTINGS frame cannot carry,
// ReadFrame refuses it) counts as 2^31-1.
func StreamWindow(size uint32) Window {
	return Window{avail: int64(min(size, MaxWindowSize)), stream: true}
}

// Available returns how many bytes the window allows now; negative when a
// smaller SETTINGS_INITIAL_WINDOW_SIZE has taken away more than was left.
func (w *Window) Available() int64 { return w.avail }

// Consume takes n bytes, a DATA frame's whole length (padding included,
// §6.9.1), from the window. On a receive window, n past what is available
// is the peer's violation, ErrStreamFlowControl or ErrConnFlowControl,
// and the window is left as it was. On a send window the caller checks
// Available first, so Consume does not fail.
func (w *Window) Consume(n uint32) error {
	if int64(n) > w.avail {
		if w.stream {
			return ErrStreamFlowControl
		}
		return ErrConnFlowControl
	}
	w.avail -= int64(n)
	return nil
}

// Add raises the window by a WINDOW_UPDATE's increment (§6.9). A zero
// increment is a PROTOCOL_ERROR, a stream error on a stream and a
// connection error on the connection (ReadFrame already refuses it; Add
// checks again for callers that build windows from elsewhere). An
// increment that takes the window past 2^31-1 is a FLOW_CONTROL_ERROR
// (§6.9.1), of the stream or of the connection, and leaves the window
// as it was.
func (w *Window) Add(increment uint32) error {
	if increment == 0 {
		if w.stream {
			return ErrStreamIncrementZero
		}
		return ErrWindowIncrementZero
	}
	if w.avail+int64(increment) > MaxWindowSize {
		if w.stream {
			return ErrStreamWindowOverflow
		}
		return ErrConnWindowOverflow
	}
	w.avail += int64(increment)
	return nil
}

// ApplyInitialSize adjusts a stream's send window when the peer changes
// SETTINGS_INITIAL_WINDOW_SIZE from oldSize to newSize (§6.9.2): by the difference, which
// may leave the window negative. A window taken past 2^31-1 is a
// connection error, ErrInitialWindowOverflow, and is left as it was. The
// connection's window does not change with the setting (§6.9.2): on a
// connection window ApplyInitialSize does nothing.
func (w *Window) ApplyInitialSize(oldSize, newSize uint32) error {
	if !w.stream {
		return nil
	}
	n := w.avail + int64(newSize) - int64(oldSize)
	if n > MaxWindowSize {
		return ErrInitialWindowOverflow
	}
	w.avail = n
	return nil
}

// SendLimit returns how many bytes of DATA a sender may put in its next
// frame on a stream: the least of want, the stream's and the connection's
// send windows, and the peer's SETTINGS_MAX_FRAME_SIZE; 0 when either
// window is empty or negative. The caller then Consumes that many from
// both windows.
func SendLimit(conn, stream *Window, maxFrameSize uint32, want int) int {
	n := min(int64(want), conn.avail, stream.avail, int64(maxFrameSize))
	return int(max(n, 0))
}

// Inflow is a receive window with the policy that decides when to give
// credit back. Receive takes what DATA frames consume; Release returns
// bytes the server is done with (read by the handler, or dropped: padding,
// the data of a reset stream); and Release says when enough has built up
// to be worth a WINDOW_UPDATE: half the window. So a server sends one
// update per half window instead of one per frame, and a handler that
// stops reading stops the credit, which is the backpressure flow control
// is for.
//
// The zero Inflow is a connection window of size 0; use Init.
type Inflow struct {
	win  Window // what the peer may still send
	size int64  // the window the server grants: win + held + owed
	owed int64  // released, not yet returned in a WINDOW_UPDATE
}

// Init starts the window at size: the SETTINGS_INITIAL_WINDOW_SIZE this
// server advertised for a stream window (stream true), or 65,535 for the
// connection's. A server that wants a larger connection window calls Grow
// and sends the increment it returns.
//
// Until the client acknowledges the server's SETTINGS, it may still use
// the initial window it knew before (65,535, §6.9.2): a server that
// advertises a smaller SETTINGS_INITIAL_WINDOW_SIZE inits streams opened
// before the acknowledgement with the larger of the two.
func (in *Inflow) Init(size uint32, stream bool) {
	if stream {
		in.win = StreamWindow(size)
	} else {
		in.win = ConnWindow(size)
	}
	in.size, in.owed = in.win.avail, 0
}

// Available returns how many bytes the peer may still send.
func (in *Inflow) Available() int64 { return in.win.avail }

// Size returns the window the server grants: what the peer may send when
// everything received has been released and returned.
func (in *Inflow) Size() int64 { return in.size }

// Receive accounts for a DATA frame of length n (its whole payload,
// padding included). A frame that does not fit is ErrStreamFlowControl or
// ErrConnFlowControl, and changes nothing.
func (in *Inflow) Receive(n uint32) error { return in.win.Consume(n) }

// Release returns n received bytes that the server is done with. It
// returns the increment of the WINDOW_UPDATE to send now, or 0 while less
// than half the window is owed. Releasing more than was received is a bug
// in the caller and panics: it would grant the peer credit it never used.
func (in *Inflow) Release(n uint32) (increment uint32) {
	if int64(n) > in.size-in.win.avail-in.owed {
		panic("h2: Inflow.Release of more bytes than were received")
	}
	in.owed += int64(n)
	if in.owed == 0 || in.owed < (in.size+1)/2 {
		return 0
	}
	return in.flush()
}

func (in *Inflow) flush() uint32 {
	inc := in.owed
	in.win.avail += inc
	in.owed = 0
	return uint32(inc)
}

// Grow raises the granted window to size and returns the increment to
// send now, including anything owed. A size not above the current one
// changes nothing and returns 0: shrinking a window the peer has already
// been granted could only be done by withholding credit.
func (in *Inflow) Grow(size uint32) (increment uint32) {
	s := int64(min(size, MaxWindowSize))
	if s <= in.size {
		return 0
	}
	in.owed += s - in.size
	in.size = s
	return in.flush()
}
