package h2

// A field block (RFC 9113 §4.3) travels in a HEADERS or PUSH_PROMISE frame
// and, when that frame lacks END_HEADERS, in the CONTINUATION frames that
// follow it. Those frames form one unit: nothing may come between them,
// not even a frame of another stream or of an unknown type (§4.3, §5.5,
// §6.10), and the block is decoded only once it is whole.
//
// The unit is also an attack surface: CVE-2024-27316 is a client that sends
// CONTINUATION frames without end, big ones to exhaust memory or empty
// ones to burn CPU, while a server waits for END_HEADERS. The Assembler
// caps both the block's compressed size and the number of CONTINUATION
// frames, and ends the connection at the first frame past either cap.

// Defaults for the Assembler's limits.
const (
	// DefaultMaxBlockSize is twice DefaultMaxHeaderListSize. A compressed
	// block is shorter than its decoded list but for pathological
	// encodings (RFC 9113 §6.5.2 counts 32 bytes per field on top of name
	// and value), so a block up to twice the list limit is assembled and
	// the Decoder answers a list over its limit with a stream error (a
	// server may send 431); only a block past twice the limit ends the
	// connection.
	DefaultMaxBlockSize = 2 * DefaultMaxHeaderListSize
	// DefaultMaxContinuations is how many CONTINUATION frames one block may
	// use. An encoder fills each frame up to SETTINGS_MAX_FRAME_SIZE
	// (16 KiB at least), so a block of DefaultMaxBlockSize needs 8; the
	// default leaves room for encoders that split smaller, and cuts a
	// flood of tiny or empty frames after a few dozen.
	DefaultMaxContinuations = 32
)

// Field block assembly errors. All are connection errors (§6.10: the
// decompression context cannot survive a broken block).
var (
	// ErrUnexpectedContinuation: a CONTINUATION frame that does not follow
	// a HEADERS, PUSH_PROMISE or CONTINUATION frame without END_HEADERS.
	ErrUnexpectedContinuation = connError(ErrCodeProtocol, "CONTINUATION frame without a preceding HEADERS, PUSH_PROMISE or CONTINUATION frame lacking END_HEADERS (§6.10)")
	// ErrExpectedContinuation: a field block is open and the next frame is
	// of another type, or a CONTINUATION on another stream.
	ErrExpectedContinuation = connError(ErrCodeProtocol, "field block interrupted: the frame after a HEADERS, PUSH_PROMISE or CONTINUATION without END_HEADERS is not a CONTINUATION on the same stream (§4.3, §6.10)")
	// ErrBlockTooLarge: the block's fragments add up to more than
	// MaxBlockSize bytes.
	ErrBlockTooLarge = connError(ErrCodeEnhanceYourCalm, "field block exceeds the assembler's MaxBlockSize (CONTINUATION flood, CVE-2024-27316)")
	// ErrTooManyContinuations: the block uses more than MaxContinuations
	// CONTINUATION frames.
	ErrTooManyContinuations = connError(ErrCodeEnhanceYourCalm, "field block uses more CONTINUATION frames than the assembler's MaxContinuations (CONTINUATION flood, CVE-2024-27316)")
)

// BlockStatus says what [Assembler.Add] did with a frame.
type BlockStatus uint8

const (
	// NotBlock: the frame is not part of a field block (no block is open
	// and it is not HEADERS, PUSH_PROMISE or CONTINUATION). The
	// connection handles it itself.
	NotBlock BlockStatus = iota
	// BlockOpen: the frame was taken into a block that continues; the
	// next frame must be a CONTINUATION on the same stream.
	BlockOpen
	// BlockDone: the frame completed a block, which [Assembler.Block]
	// returns.
	BlockDone
)

// HeaderBlock is a complete field block and what its first frame said.
type HeaderBlock struct {
	// Start is the header of the HEADERS or PUSH_PROMISE frame that
	// opened the block: its stream, type and flags (FlagEndStream for
	// HEADERS; FlagEndHeaders is set whether or not the block used
	// CONTINUATION frames).
	Start FrameHeader
	// Priority is the HEADERS frame's priority when HasPriority.
	Priority    Priority
	HasPriority bool
	// PromisedID is a PUSH_PROMISE frame's promised stream.
	PromisedID uint32
	// Fragment is the whole compressed field block, for the Decoder.
	Fragment []byte
	// Continuations is how many CONTINUATION frames the block used.
	Continuations int
}

// Assembler joins a HEADERS or PUSH_PROMISE frame and its CONTINUATION
// frames into one field block, and enforces the order §4.3 and §6.10
// require. A connection keeps one Assembler and gives it every frame it
// reads, in order, before acting on the frame:
//
//	switch st, err := asm.Add(&f); {
//	case err != nil:
//		// connection error: GOAWAY with err's code
//	case st == h2.BlockDone:
//		blk := asm.Block() // decode blk.Fragment, then act on blk.Start
//	case st == h2.NotBlock:
//		// handle f
//	}
//
// A block in one frame (END_HEADERS on the HEADERS frame, the common case)
// is returned without copying: Fragment aliases the frame's payload, and
// lives as long as the caller's read buffer. A block spread over frames is
// copied, fragment by fragment, into a buffer the Assembler owns and
// reuses: Fragment is then valid until the next call to Add. The buffer
// never grows past MaxBlockSize.
//
// A HEADERS frame that ReadFrame returned with a stream error
// (ErrSelfDependency) must be given to Add all the same: its block must be
// decoded to keep the HPACK table in step (§4.3).
//
// The zero Assembler is ready to use with the default limits.
type Assembler struct {
	// MaxBlockSize caps the compressed block: the sum of its fragments.
	// 0 means DefaultMaxBlockSize, twice DefaultMaxHeaderListSize: a
	// server that sets the Decoder's MaxHeaderListSize sets this to twice
	// that value.
	MaxBlockSize int
	// MaxContinuations caps the number of CONTINUATION frames in one
	// block. 0 means DefaultMaxContinuations; a negative value allows
	// none.
	MaxContinuations int

	buf   []byte
	block HeaderBlock
	open  bool // a block awaits CONTINUATION frames
}

func (a *Assembler) limits() (maxSize, maxCont int) {
	maxSize, maxCont = a.MaxBlockSize, a.MaxContinuations
	if maxSize <= 0 {
		maxSize = DefaultMaxBlockSize
	}
	if maxCont == 0 {
		maxCont = DefaultMaxContinuations
	} else if maxCont < 0 {
		maxCont = 0
	}
	return maxSize, maxCont
}

// Open reports whether a block is open, and on which stream: then the
// next frame must be a CONTINUATION on that stream. A connection uses it,
// for example, to refuse to time out or shut down in the middle of a block.
func (a *Assembler) Open() (streamID uint32, open bool) {
	return a.block.Start.StreamID, a.open
}

// Forget drops the Assembler's hold on the last complete block, whose
// Fragment may alias the caller's read buffer, so that the buffer can be
// freed or reused. A block still open is kept.
func (a *Assembler) Forget() {
	if !a.open {
		a.block.Fragment = nil
	}
}

// Add takes the next frame read from the connection. It returns NotBlock
// for a frame outside any field block, BlockOpen when f began or continued
// a block that is not yet whole, and BlockDone when the block is complete.
// err, always a connection error, reports a frame out of order or a block
// past the limits; the connection must end, and the Assembler is left
// closed (Reset is not needed).
func (a *Assembler) Add(f *Frame) (BlockStatus, error) {
	if a.open {
		if f.Type != FrameContinuation || f.StreamID != a.block.Start.StreamID {
			a.abort()
			return NotBlock, ErrExpectedContinuation
		}
		return a.continuation(f)
	}
	switch f.Type {
	case FrameHeaders, FramePushPromise:
		return a.start(f)
	case FrameContinuation:
		return NotBlock, ErrUnexpectedContinuation
	}
	return NotBlock, nil
}

func (a *Assembler) start(f *Frame) (BlockStatus, error) {
	maxSize, _ := a.limits()
	frag := f.BlockFragment()
	if len(frag) > maxSize {
		return NotBlock, ErrBlockTooLarge
	}
	a.block = HeaderBlock{Start: f.FrameHeader, PromisedID: f.PromisedID()}
	a.block.Priority, a.block.HasPriority = f.Priority()
	if f.Flags.Has(FlagEndHeaders) {
		a.block.Fragment = frag // zero copy: the caller's buffer
		return BlockDone, nil
	}
	// The caller's buffer may be reused before the CONTINUATION frames
	// arrive: keep the fragment in ours.
	a.block.Start.Flags |= FlagEndHeaders
	a.buf = a.grow(len(frag), maxSize)
	a.buf = append(a.buf[:0], frag...)
	a.open = true
	return BlockOpen, nil
}

func (a *Assembler) continuation(f *Frame) (BlockStatus, error) {
	maxSize, maxCont := a.limits()
	frag := f.BlockFragment()
	if a.block.Continuations >= maxCont {
		a.abort()
		return NotBlock, ErrTooManyContinuations
	}
	if len(frag) > maxSize-len(a.buf) {
		a.abort()
		return NotBlock, ErrBlockTooLarge
	}
	a.block.Continuations++
	a.buf = a.grow(len(a.buf)+len(frag), maxSize)
	a.buf = append(a.buf, frag...)
	if !f.Flags.Has(FlagEndHeaders) {
		return BlockOpen, nil
	}
	a.open = false
	a.block.Fragment = a.buf
	return BlockDone, nil
}

// grow returns a.buf with capacity for n bytes, growing it to at most
// maxSize (n ≤ maxSize): append's own doubling could pass the cap.
func (a *Assembler) grow(n, maxSize int) []byte {
	if n <= cap(a.buf) {
		return a.buf
	}
	c := max(2*cap(a.buf), n, 512)
	c = min(c, maxSize)
	b := make([]byte, len(a.buf), c)
	copy(b, a.buf)
	return b
}

func (a *Assembler) abort() {
	a.open = false
	a.block = HeaderBlock{}
	a.buf = a.buf[:0]
}

// Block returns the block that the last call to Add completed (BlockDone).
// Its Fragment is valid until the next call to Add when the block spanned
// frames, and as long as the frame's buffer otherwise.
func (a *Assembler) Block() HeaderBlock {
	return a.block
}

// Reset forgets any open block and keeps the buffer, for a connection
// that starts over. Release drops the buffer too, for an idle connection
// that should hold no memory.
func (a *Assembler) Reset() { a.abort() }

// Release forgets any open block and drops the buffer.
func (a *Assembler) Release() {
	a.abort()
	a.buf = nil
}

// BufferCap reports the capacity of the Assembler's own buffer: 0 until a
// block has spanned frames, never more than MaxBlockSize.
func (a *Assembler) BufferCap() int { return cap(a.buf) }
