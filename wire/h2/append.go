package h2

import "encoding/binary"

// Appenders write one frame each to the end of dst and return the extended
// slice, as strconv's Append functions do: with a dst of enough capacity
// they do not allocate. They trust their arguments as an encoder should: a
// payload longer than the peer's SETTINGS_MAX_FRAME_SIZE is the caller's
// bug, and only a length past 2^24-1, which would corrupt the connection,
// panics. Stream identifiers are written without their reserved bit.

// appendPadded appends a frame whose payload is an optional pad length
// byte, fixed fields, body and padding: the shape of DATA, HEADERS and
// PUSH_PROMISE. With FlagPadded in flags it writes padLen zero bytes of
// padding (§6.1: padding octets MUST be zero); without, padLen is ignored.
func appendPadded(dst []byte, t FrameType, flags Flags, streamID uint32, fixed, body []byte, padLen uint8) []byte {
	n := len(fixed) + len(body)
	if flags.Has(FlagPadded) {
		n += 1 + int(padLen)
	}
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(n), Type: t, Flags: flags, StreamID: streamID})
	if flags.Has(FlagPadded) {
		dst = append(dst, padLen)
	}
	dst = append(dst, fixed...)
	dst = append(dst, body...)
	if flags.Has(FlagPadded) {
		for range padLen {
			dst = append(dst, 0)
		}
	}
	return dst
}

// AppendData appends a DATA frame (§6.1). flags may hold FlagEndStream and
// FlagPadded; with FlagPadded, padLen zero bytes of padding follow data.
func AppendData(dst []byte, streamID uint32, flags Flags, data []byte, padLen uint8) []byte {
	return appendPadded(dst, FrameData, flags, streamID, nil, data, padLen)
}

// AppendHeaders appends a HEADERS frame (§6.2) carrying the field block
// fragment frag. flags may hold FlagEndStream, FlagEndHeaders, FlagPadded
// and FlagPriority; with FlagPriority, prio is written before frag.
func AppendHeaders(dst []byte, streamID uint32, flags Flags, prio Priority, frag []byte, padLen uint8) []byte {
	var fixed [5]byte
	var f []byte
	if flags.Has(FlagPriority) {
		f = putPriority(fixed[:0], prio)
	}
	return appendPadded(dst, FrameHeaders, flags, streamID, f, frag, padLen)
}

func putPriority(b []byte, p Priority) []byte {
	v := p.StreamDep & streamIDMask
	if p.Exclusive {
		v |= 1 << 31
	}
	return append(binary.BigEndian.AppendUint32(b, v), p.Weight)
}

// AppendPriority appends a PRIORITY frame (§6.3).
func AppendPriority(dst []byte, streamID uint32, p Priority) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 5, Type: FramePriority, StreamID: streamID})
	return putPriority(dst, p)
}

// AppendRSTStream appends an RST_STREAM frame (§6.4).
func AppendRSTStream(dst []byte, streamID uint32, code ErrCode) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 4, Type: FrameRSTStream, StreamID: streamID})
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}

// AppendSettings appends a SETTINGS frame carrying settings, in order (§6.5).
func AppendSettings(dst []byte, settings ...Setting) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(6 * len(settings)), Type: FrameSettings})
	for _, s := range settings {
		dst = binary.BigEndian.AppendUint16(dst, uint16(s.ID))
		dst = binary.BigEndian.AppendUint32(dst, s.Val)
	}
	return dst
}

// AppendSettingsAck appends an empty SETTINGS frame with FlagAck (§6.5.3).
func AppendSettingsAck(dst []byte) []byte {
	return AppendFrameHeader(dst, FrameHeader{Type: FrameSettings, Flags: FlagAck})
}

// AppendPushPromise appends a PUSH_PROMISE frame (§6.6). flags may hold
// FlagEndHeaders and FlagPadded.
func AppendPushPromise(dst []byte, streamID uint32, flags Flags, promisedID uint32, frag []byte, padLen uint8) []byte {
	var fixed [4]byte
	binary.BigEndian.PutUint32(fixed[:], promisedID&streamIDMask)
	return appendPadded(dst, FramePushPromise, flags, streamID, fixed[:], frag, padLen)
}

// AppendPing appends a PING frame (§6.7); an answer sets FlagAck and echoes
// the data.
func AppendPing(dst []byte, flags Flags, data [8]byte) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 8, Type: FramePing, Flags: flags})
	return append(dst, data[:]...)
}

// AppendGoAway appends a GOAWAY frame (§6.8).
func AppendGoAway(dst []byte, lastStreamID uint32, code ErrCode, debug []byte) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(8 + len(debug)), Type: FrameGoAway})
	dst = binary.BigEndian.AppendUint32(dst, lastStreamID&streamIDMask)
	dst = binary.BigEndian.AppendUint32(dst, uint32(code))
	return append(dst, debug...)
}

// AppendWindowUpdate appends a WINDOW_UPDATE frame (§6.9); streamID 0
// updates the connection's window.
func AppendWindowUpdate(dst []byte, streamID, increment uint32) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: 4, Type: FrameWindowUpdate, StreamID: streamID})
	return binary.BigEndian.AppendUint32(dst, increment&streamIDMask)
}

// AppendContinuation appends a CONTINUATION frame (§6.10); flags may hold
// FlagEndHeaders.
func AppendContinuation(dst []byte, streamID uint32, flags Flags, frag []byte) []byte {
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(len(frag)), Type: FrameContinuation, Flags: flags, StreamID: streamID})
	return append(dst, frag...)
}

// AppendHeaderBlock appends a whole field block as a HEADERS frame and as
// many CONTINUATION frames as needed to keep each payload within
// maxFrameSize, the peer's SETTINGS_MAX_FRAME_SIZE (§4.3: the frames of one
// block must be contiguous, and FlagEndHeaders ends the last). endStream
// sets FlagEndStream on the HEADERS frame.
func AppendHeaderBlock(dst []byte, streamID uint32, endStream bool, block []byte, maxFrameSize uint32) []byte {
	if maxFrameSize < DefaultMaxFrameSize {
		maxFrameSize = DefaultMaxFrameSize
	}
	var flags Flags
	if endStream {
		flags = FlagEndStream
	}
	first := block
	if uint32(len(first)) > maxFrameSize {
		first = first[:maxFrameSize]
	} else {
		flags |= FlagEndHeaders
	}
	dst = AppendHeaders(dst, streamID, flags, Priority{}, first, 0)
	block = block[len(first):]
	for len(block) > 0 {
		frag, flags := block, Flags(0)
		if uint32(len(frag)) > maxFrameSize {
			frag = frag[:maxFrameSize]
		} else {
			flags = FlagEndHeaders
		}
		dst = AppendContinuation(dst, streamID, flags, frag)
		block = block[len(frag):]
	}
	return dst
}
