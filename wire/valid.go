package wire

// Validation of field names and values a program asks to send.

// ValidHeaderName reports whether name is a non-empty token.
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !tokenByte[name[i]] {
			return false
		}
	}
	return true
}

// ValidHeaderValue reports whether v may be sent as a field value: no
// control bytes other than HTAB (so no CR or LF to split the response).
func ValidHeaderValue[T string | []byte](v T) bool {
	return indexCtlInValue(v) < 0
}
