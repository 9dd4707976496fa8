package ws

import (
	"crypto/sha1"
	"encoding/base64"
)

// acceptGUID is the GUID of RFC 6455 §1.3 that a server appends to the
// client's key before hashing it.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey returns the Sec-WebSocket-Accept value for a client's
// Sec-WebSocket-Key (RFC 6455 §4.2.2): the base64 of the SHA-1 of the key
// followed by the RFC's GUID. For the key "dGhlIHNhbXBsZSBub25jZQ==" it
// is "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" (§1.3).
func AcceptKey(key string) string {
	var buf [28]byte
	return string(AppendAcceptKey(buf[:0], []byte(key)))
}

// AppendAcceptKey appends [AcceptKey]'s 28 bytes for key to dst. It
// allocates nothing but dst's growth for a key of up to 64 bytes (a
// valid key has 24).
func AppendAcceptKey(dst, key []byte) []byte {
	var sum [sha1.Size]byte
	if len(key) <= 64 {
		var in [64 + len(acceptGUID)]byte
		n := copy(in[:], key)
		n += copy(in[n:], acceptGUID)
		sum = sha1.Sum(in[:n])
	} else {
		h := sha1.New()
		h.Write(key)
		h.Write([]byte(acceptGUID))
		h.Sum(sum[:0])
	}
	return base64.StdEncoding.AppendEncode(dst, sum[:])
}

// ValidKey reports whether key is a valid Sec-WebSocket-Key (RFC 6455
// §4.1, §4.2.1): the base64 encoding, padded, of 16 bytes, which is 24
// characters. A server answers 400 to a handshake whose key is not. Pass
// the header value with its surrounding whitespace trimmed.
func ValidKey(key []byte) bool {
	if len(key) != 24 || key[22] != '=' || key[23] != '=' {
		return false
	}
	var out [18]byte
	n, err := base64.StdEncoding.Decode(out[:], key)
	return err == nil && n == 16
}
