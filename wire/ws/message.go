package ws

// The messages of one direction of a connection (RFC 6455 §5.4), frame by
// frame:
//
//	               text/binary, FIN
//	            +-------------------+
//	            v                   |
//	        +-------+  text/binary, no FIN  +---------+
//	  ----> | idle  | --------------------> | in      | -+ continuation, no FIN
//	        |       | <-------------------- | message | <+
//	        +-------+   continuation, FIN   +---------+
//
// Control frames (close, ping, pong) may come in either state, between the
// fragments of a message, and change nothing. A continuation frame while
// idle, or a text or binary frame in a message, fails the connection with
// 1002.

// DefaultMaxMessage is the largest message an [Assembler] accepts when
// MaxMessage is zero: 16 MiB, as [DefaultMaxPayload].
const DefaultMaxMessage = 16 << 20

// Assembler follows the data frames of one direction of a connection and
// says, for each frame header, whether it may come now and which message
// its payload belongs to. It holds no payload: the caller keeps or streams
// the data. Its zero value is ready, with the default limit.
type Assembler struct {
	// MaxMessage is the largest message, the sum of its frames' payload
	// lengths; a frame that would pass it fails with [ErrMessageTooLarge]
	// (1009). Zero means DefaultMaxMessage; a negative value means no
	// limit. Under permessage-deflate this bounds the compressed size;
	// the caller bounds what inflating yields.
	MaxMessage int64

	op         Opcode // the message in progress or last finished: text or binary
	open       bool   // a message has begun and its FIN frame has not come
	compressed bool   // the message's first frame had RSV1
	size       int64  // payload bytes of the message so far
}

// Frame takes the next frame's header, as [ParseHeader] returned it, and
// returns the opcode its payload belongs to: a control frame's own, or the
// message's (text or binary) for a data frame, a continuation frame
// included. A data frame with Fin ends its message: the message is whole
// once that frame's payload is read.
//
// Errors: a continuation frame with no message open
// ([ErrUnexpectedContinuation]), a text or binary frame while one is open
// ([ErrMessageNotFinished]), both 1002; a message over MaxMessage
// ([ErrMessageTooLarge], 1009); a reserved opcode (1002), which
// ParseHeader has refused already. After an error the connection is
// failed; the Assembler's state is unchanged.
func (a *Assembler) Frame(h Header) (Opcode, error) {
	switch {
	case h.Opcode.IsControl():
		if !h.Opcode.valid() {
			return 0, ErrReservedOpcode
		}
		return h.Opcode, nil
	case h.Opcode == OpContinuation:
		if !a.open {
			return 0, ErrUnexpectedContinuation
		}
		if a.tooLarge(a.size, h.Length) {
			return 0, ErrMessageTooLarge
		}
		a.size += h.Length
	case h.Opcode.IsData():
		if a.open {
			return 0, ErrMessageNotFinished
		}
		if a.tooLarge(0, h.Length) {
			return 0, ErrMessageTooLarge
		}
		a.op, a.compressed, a.size = h.Opcode, h.Rsv1, h.Length
	default:
		return 0, ErrReservedOpcode
	}
	a.open = !h.Fin
	return a.op, nil
}

func (a *Assembler) tooLarge(size, n int64) bool {
	max := a.MaxMessage
	if max == 0 {
		max = DefaultMaxMessage
	}
	return max > 0 && n > max-size
}

// InMessage reports whether a fragmented message has begun and not ended:
// the next data frame must be a continuation.
func (a *Assembler) InMessage() bool { return a.open }

// Compressed reports whether the message in progress, or the one that
// just ended, was sent compressed (RSV1 on its first frame, RFC 7692
// §6.1).
func (a *Assembler) Compressed() bool { return a.compressed }

// Size returns the payload bytes of the message in progress, or of the one
// that just ended, as counted from the frame headers so far.
func (a *Assembler) Size() int64 { return a.size }

// Reset forgets any message in progress; MaxMessage is kept.
func (a *Assembler) Reset() { *a = Assembler{MaxMessage: a.MaxMessage} }
