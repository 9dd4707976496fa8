package wire

// Limits bound what a request head may hold. The zero value of a field
// means the default given in its comment; see [DefaultLimits].
type Limits struct {
	// MaxRequestLineBytes caps the request line (method, target and
	// version, without the line ending). Longer lines get 414. Default 8 KiB.
	MaxRequestLineBytes int
	// MaxHeaderBytes caps the whole head: request line, header fields and
	// line endings. Larger heads get 431. Default 64 KiB.
	MaxHeaderBytes int
	// MaxHeaders caps the number of header fields. More get 431. Default 500.
	MaxHeaders int
	// MaxBodyBytes caps a declared Content-Length; larger get 413. Chunked
	// bodies are checked by the reader of the body. Default 4 MiB;
	// negative means no limit.
	MaxBodyBytes int64
}

// The defaults of [Limits].
const (
	DefaultMaxRequestLineBytes = 8 << 10
	DefaultMaxHeaderBytes      = 64 << 10
	DefaultMaxHeaders          = 500
	DefaultMaxBodyBytes        = 4 << 20
	// DefaultMaxTrailerBytes caps a chunked body's trailer section
	// (net/http stops at 4 KiB; trailers are rare and small).
	DefaultMaxTrailerBytes = 16 << 10
)

// DefaultLimits returns the limits the zero Limits stands for.
func DefaultLimits() Limits {
	return Limits{
		MaxRequestLineBytes: DefaultMaxRequestLineBytes,
		MaxHeaderBytes:      DefaultMaxHeaderBytes,
		MaxHeaders:          DefaultMaxHeaders,
		MaxBodyBytes:        DefaultMaxBodyBytes,
	}
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxRequestLineBytes <= 0 {
		l.MaxRequestLineBytes = d.MaxRequestLineBytes
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxHeaders <= 0 {
		l.MaxHeaders = d.MaxHeaders
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	return l
}
