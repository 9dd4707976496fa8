package vectors

import (
	"fmt"
	"strings"
)

// Chunks is the chunked-body table.
var Chunks = append([]Chunked{
	// internal/chunked_test.go. Where a net/http input stops after the
	// last-chunk line (net/http reads trailers elsewhere), the empty line
	// that ends the trailer section is appended so that the body is whole.
	{Name: "TestChunk", Source: srcChunkedTests + "TestChunk",
		Raw:  "7\r\nhello, \r\n17\r\nworld! 0123456789abcdef\r\n0\r\n\r\n",
		Body: "hello, world! 0123456789abcdef"},
	{Name: "TestChunkReadMultiple/small", Source: srcChunkedTests + "TestChunkReadMultiple",
		Raw: "3\r\nfoo\r\n3\r\nbar\r\n0\r\n\r\n", Body: "foobar"},
	{Name: "TestChunkReadMultiple/fill-buffer", Source: srcChunkedTests + "TestChunkReadMultiple",
		Raw: "b\r\n0123456789a\r\n3\r\nfoo\r\n0\r\n\r\n", Body: "0123456789afoo"},
	{Name: "TestChunkReadMultiple/eof-chunk", Source: srcChunkedTests + "TestChunkReadMultiple",
		Raw: "3\r\nfoo\r\n0\r\n\r\n", Body: "foo"},
	{Name: "TestChunkReaderAllocs", Source: srcChunkedTests + "TestChunkReaderAllocs",
		Raw:  "6\r\naaaaaa\r\nc\r\nbbbbbbbbbbbb\r\n18\r\n" + strings.Repeat("c", 24) + "\r\n0\r\n\r\n",
		Body: "aaaaaa" + strings.Repeat("b", 12) + strings.Repeat("c", 24)},
	{Name: "TestParseHexUint/x", Source: srcChunkedTests + "TestParseHexUint", Raw: "x\r\n\r\n", Err: true},
	{Name: "TestParseHexUint/16-zeros", Source: srcChunkedTests + "TestParseHexUint",
		Raw: "0000000000000000\r\n\r\n", Note: "16 hex digits of 0: the last chunk"},
	{Name: "TestParseHexUint/16-digits-1", Source: srcChunkedTests + "TestParseHexUint",
		Raw: "0000000000000001\r\nz\r\n0\r\n\r\n", Body: "z"},
	{Name: "TestParseHexUint/max-uint64", Source: srcChunkedTests + "TestParseHexUint",
		Raw: "ffffffffffffffff\r\nabc", Body: "abc", Incomplete: true,
		Note: "a 2^64-1 byte chunk is well-formed; a server's body limit stops it"},
	{Name: "TestParseHexUint/bogus", Source: srcChunkedTests + "TestParseHexUint", Raw: "000000000000bogus\r\n", Err: true},
	{Name: "TestParseHexUint/17-zeros", Source: srcChunkedTests + "TestParseHexUint", Raw: "00000000000000000\r\n\r\n", Err: true,
		Note: "more than 16 hex digits, even zeros, as net/http"},
	{Name: "TestParseHexUint/2^64", Source: srcChunkedTests + "TestParseHexUint", Raw: "10000000000000000\r\n", Err: true},
	{Name: "TestParseHexUint/17-digits-1", Source: srcChunkedTests + "TestParseHexUint", Raw: "00000000000000001\r\nz\r\n0\r\n\r\n", Err: true},
	{Name: "TestParseHexUint/empty", Source: srcChunkedTests + "TestParseHexUint", Raw: "\r\n", Err: true},
	{Name: "TestChunkReadingIgnoresExtensions", Source: srcChunkedTests + "TestChunkReadingIgnoresExtensions",
		Raw: "7;ext=\"some quoted string\"\r\nhello, \r\n17;someext\r\nworld! 0123456789abcdef\r\n" +
			"0;someextension=sometoken\r\n\r\n",
		Body: "hello, world! 0123456789abcdef"},
	{Name: "TestChunkReadPartial/cut", Source: srcChunkedTests + "TestChunkReadPartial",
		Raw: "7\r\n1234567", Body: "1234567", Incomplete: true},
	{Name: "TestChunkReadPartial/bad-end", Source: srcChunkedTests + "TestChunkReadPartial",
		Raw: "7\r\n1234567xx", Err: true},
	{Name: "TestIncompleteChunk/whole", Source: srcChunkedTests + "TestIncompleteChunk",
		Raw: "4\r\nabcd\r\n5\r\nabc\r\n\r\n0\r\n\r\n", Body: "abcdabc\r\n"},
	{Name: "TestChunkEndReadError", Source: srcChunkedTests + "TestChunkEndReadError",
		Raw: "4\r\nabcd", Body: "abcd", Incomplete: true},
	{Name: "TestChunkReaderTooMuchOverhead", Source: srcChunkedTests + "TestChunkReaderTooMuchOverhead",
		Raw: strings.Repeat("1;"+strings.Repeat("a", 100)+"\r\nX\r\n", 400) + "0\r\n\r\n", Err: true,
		Note: "one data byte per 100 bytes of extension: refused after some 16 KiB of overhead"},
	{Name: "TestChunkReaderByteAtATime", Source: srcChunkedTests + "TestChunkReaderByteAtATime",
		Raw: strings.Repeat("1\r\nX\r\n", 1<<16) + "0\r\n\r\n", Body: strings.Repeat("X", 1<<16),
		Note: "net/http sends 2^20 such chunks; 2^16 keep the table small, and the overhead count is flat after the first"},
	{Name: "TestChunkInvalidInputs/bare-LF-in-size", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1\na\r\n0\r\n", Err: true},
	{Name: "TestChunkInvalidInputs/extra-CR-in-size", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1\r\r\na\r\n0\r\n", Err: true},
	{Name: "TestChunkInvalidInputs/bare-LF-after-data", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1\r\na\n0\r\n", Err: true},
	{Name: "TestChunkInvalidInputs/bare-LF-in-extension", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1;\na\r\n0\r\n", Err: true},

	// Chunk sizes.
	{Name: "size/upper-case-hex", Source: srcChunkSize, Raw: "A\r\n0123456789\r\n0\r\n\r\n", Body: "0123456789"},
	{Name: "size/leading-zeros", Source: srcChunkSize, Raw: "0003\r\nabc\r\n000\r\n\r\n", Body: "abc"},
	{Name: "size/0x-prefix", Source: srcChunkSize, Raw: "0x3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/plus", Source: srcChunkSize, Raw: "+3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/minus", Source: srcChunkSize, Raw: "-3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/leading-space", Source: srcChunkSize, Raw: " 3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/trailing-space", Source: srcChunkSize, Raw: "3 \r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "hotpath rejects whitespace after a chunk size (RFC 9112 §7.1 has none there); net/http trims it and accepts"},
	{Name: "size/trailing-tab", Source: srcChunkSize, Raw: "3\t\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "as size/trailing-space; net/http accepts"},
	{Name: "size/data-too-long", Source: srcChunkSize, Raw: "3\r\nabcd\r\n0\r\n\r\n", Err: true},
	{Name: "size/data-too-short", Source: srcChunkSize, Raw: "3\r\nab\r\n0\r\n\r\n", Err: true},
	{Name: "size/bare-LF-last-chunk", Source: srcChunkSize, Raw: "3\r\nabc\r\n0\n\r\n", Err: true},
	{Name: "size/CR-after-data-then-LF-missing", Source: srcChunkSize, Raw: "3\r\nabc\r0\r\n\r\n", Err: true},
	{Name: "size/empty-body", Source: srcChunkSize, Raw: "", Incomplete: true},
	{Name: "size/no-trailer-end", Source: srcChunkSize, Raw: "3\r\nabc\r\n0\r\n", Body: "abc", Incomplete: true,
		Note: "net/http's chunked reader stops after the last-chunk line; the body ends only at the empty line"},
	{Name: "size/big-chunk", Source: srcChunkSize,
		Raw: "10000\r\n" + strings.Repeat("d", 1<<16) + "\r\n0\r\n\r\n", Body: strings.Repeat("d", 1<<16)},

	// Chunk extensions (RFC 9112 §7.1.1).
	{Name: "ext/empty", Source: srcChunkExt, Raw: "3;\r\nabc\r\n0\r\n\r\n", Body: "abc"},
	{Name: "ext/several", Source: srcChunkExt, Raw: "3;a=1;b;c=\"x;y\"\r\nabc\r\n0;z\r\n\r\n", Body: "abc"},
	{Name: "ext/spaces-after-semicolon", Source: srcChunkExt, Raw: "3; a = 1\r\nabc\r\n0\r\n\r\n", Body: "abc"},
	{Name: "ext/space-before-semicolon", Source: srcChunkExt, Raw: "3 ;a\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "RFC 9112 allows BWS before ';' but net/http rejects it, and hotpath follows the stricter reading"},
	{Name: "ext/tab-before-semicolon", Source: srcChunkExt, Raw: "3\t;a\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/nul", Source: srcChunkExt, Raw: "3;a=\x00\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "hotpath refuses control bytes in extensions; net/http does not look at them and accepts"},
	{Name: "ext/del", Source: srcChunkExt, Raw: "3;a=\x7f\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "as ext/nul; net/http accepts"},
	{Name: "ext/obs-text", Source: srcChunkExt, Raw: "3;a=\xff\r\nabc\r\n0\r\n\r\n", Body: "abc"},
	{Name: "ext/bare-CR", Source: srcChunkExt, Raw: "3;a\rb\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/line-at-limit", Source: srcChunkExt,
		Raw: "3;" + strings.Repeat("e", 4096-len("3;\r\n")) + "\r\nabc\r\n0\r\n\r\n", Body: "abc",
		Note: "a chunk line of 4096 bytes with its CRLF, the most net/http reads through its 4 KiB buffer"},
	{Name: "ext/line-over-limit", Source: srcChunkExt,
		Raw: "3;" + strings.Repeat("e", 4097-len("3;\r\n")) + "\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/line-10KiB", Source: srcChunkExt,
		Raw: "3;" + strings.Repeat("e", 10<<10) + "\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/last-chunk-over-limit", Source: srcChunkExt,
		Raw: "0;" + strings.Repeat("e", 5000) + "\r\n\r\n", Err: true},

	// Framing overhead (net/http allows 16 bytes per chunk plus twice the
	// data before it counts; hotpath counts the same way or earlier).
	{Name: "overhead/long-extensions-tiny-chunks", Source: srcOverhead,
		Raw: strings.Repeat("1;"+strings.Repeat("e", 4000)+"\r\nX\r\n", 5) + "0\r\n\r\n", Err: true},
	{Name: "overhead/long-extensions-big-chunks", Source: srcOverhead,
		Raw:  strings.Repeat("800;"+strings.Repeat("e", 4000)+"\r\n"+strings.Repeat("d", 0x800)+"\r\n", 20) + "0\r\n\r\n",
		Body: strings.Repeat("d", 0x800*20), Note: "long extensions paid for by twice as much data"},
	{Name: "overhead/empty-extensions-one-byte-chunks", Source: srcOverhead,
		Raw: strings.Repeat("1;\r\nY\r\n", 5000) + "0\r\n\r\n", Body: strings.Repeat("Y", 5000)},
	{Name: "overhead/many-zero-padded-sizes", Source: srcOverhead,
		Raw: strings.Repeat("000000000000001\r\nZ\r\n", 2000) + "0\r\n\r\n", Body: strings.Repeat("Z", 2000),
		Note: "15-digit sizes for 1-byte chunks stay within the 16 bytes a chunk may spend on framing"},
	{Name: "overhead/padded-sizes-with-extension", Source: srcOverhead,
		Raw: strings.Repeat("000000000000001;ext=value\r\nZ\r\n", 2000) + "0\r\n\r\n", Err: true,
		Note: "26 bytes of framing per data byte: refused once the excess passes 16 KiB"},

	// Trailer section (RFC 9112 §7.1.2).
	{Name: "trailer/one-field", Source: srcTrailers, Raw: "3\r\nabc\r\n0\r\nX-Sum: 123\r\n\r\n", Body: "abc"},
	{Name: "trailer/two-fields", Source: srcTrailers, Raw: "0\r\nA: 1\r\nB:2\r\n\r\n"},
	{Name: "trailer/space-before-colon", Source: srcTrailers, Raw: "0\r\nA : 1\r\n\r\n", Err: true,
		Note: "trailer fields follow the header field rules; net/http's trailer reader accepts a space before the colon"},
	{Name: "trailer/leading-space", Source: srcTrailers, Raw: "0\r\n A: 1\r\n\r\n", Err: true},
	{Name: "trailer/no-colon", Source: srcTrailers, Raw: "0\r\nA\r\n\r\n", Err: true},
	{Name: "trailer/nul-in-value", Source: srcTrailers, Raw: "0\r\nA: \x00\r\n\r\n", Err: true},
	{Name: "trailer/bare-LF-field", Source: srcTrailers, Raw: "0\r\nA: 1\n\r\n", Err: true,
		Note: "hotpath wants CRLF throughout chunked framing; net/http's trailer reader accepts a lone LF"},
	{Name: "trailer/bare-LF-end", Source: srcTrailers, Raw: "0\r\n\n", Err: true,
		Note: "as trailer/bare-LF-field"},
	{Name: "trailer/bare-CR", Source: srcTrailers, Raw: "0\r\nA: 1\r2\r\n\r\n", Err: true},
	{Name: "trailer/cut", Source: srcTrailers, Raw: "0\r\nA: 1\r\n", Incomplete: true},
	{Name: "trailer/over-16KiB", Source: srcTrailers,
		Raw: "0\r\n" + strings.Repeat("A: "+strings.Repeat("t", 1000)+"\r\n", 17) + "\r\n", Err: true,
		Note: "net/http refuses trailers that do not fit its 4 KiB buffer; hotpath allows 16 KiB"},
}, generatedChunks()...)

// generatedChunks covers, as whole bodies, the inputs that net/http's
// tests build in loops: every prefix of TestIncompleteChunk's body and
// every chunk size 0 to 1234 of TestParseHexUint.
func generatedChunks() []Chunked {
	var out []Chunked
	const whole = "4\r\nabcd\r\n5\r\nabc\r\n\r\n0\r\n"
	for i := range len(whole) {
		body := ""
		switch {
		case i > len("4\r\nabcd\r\n5\r\n"):
			body = "abcd" + whole[len("4\r\nabcd\r\n5\r\n"):min(i, len("4\r\nabcd\r\n5\r\nabc\r\n"))]
		case i > len("4\r\n"):
			body = whole[len("4\r\n"):min(i, len("4\r\nabcd"))]
		}
		out = append(out, Chunked{
			Name: fmt.Sprintf("TestIncompleteChunk/prefix-%d", i), Source: srcChunkedTests + "TestIncompleteChunk",
			Raw: whole[:i], Body: body, Incomplete: true,
		})
	}
	for n := 0; n <= 1234; n++ {
		data := strings.Repeat(string(rune('a'+n%26)), n)
		raw := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", n, data)
		if n == 0 {
			raw = "0\r\n\r\n"
		}
		out = append(out, Chunked{
			Name: fmt.Sprintf("TestParseHexUint/size-%x", n), Source: srcChunkedTests + "TestParseHexUint",
			Raw: raw, Body: data,
		})
	}
	return out
}
