package ws

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func BenchmarkMask(b *testing.B) {
	for _, n := range []int{16, 125, 1024, 64 << 10} {
		buf := make([]byte, n+1)
		b.Run(sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Mask(rfcKey, 1, buf[1:]) // unaligned on purpose
			}
		})
	}
}

// BenchmarkMaskBytes is the byte loop Mask replaces, for the ratio.
func BenchmarkMaskBytes(b *testing.B) {
	buf := make([]byte, 64<<10+1)
	b.SetBytes(64 << 10)
	for b.Loop() {
		maskBytes(rfcKey, 1, buf[1:])
	}
}

func sizeName(n int) string {
	if n >= 1024 {
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

func BenchmarkParseHeader(b *testing.B) {
	for _, bc := range []struct {
		name string
		in   []byte
		r    Rules
	}{
		{"masked-small", rfcMaskHello, Rules{Role: Server}},
		{"masked-64bit", AppendHeader(nil, Header{Fin: true, Opcode: OpBinary, Masked: true, Length: 1 << 20}), Rules{Role: Server}},
		{"unmasked-16bit", rfc256Header, Rules{Role: Client}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := ParseHeader(bc.in, bc.r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var utf8BenchTexts = []struct{ name, text string }{
	{"ascii", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)},
	{"mixed", strings.Repeat("Hello, κόσμε! Größe, 日本語のテキスト, emoji 🙂. ", 50)},
	{"cjk", strings.Repeat("日本語のテキストと中文文本", 100)},
}

func BenchmarkUTF8(b *testing.B) {
	for _, bc := range utf8BenchTexts {
		p := []byte(bc.text)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			var u UTF8
			for b.Loop() {
				u.Reset()
				if !u.Write(p) || !u.Done() {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkUTF8Valid is unicode/utf8.Valid on the same texts, whole: the
// baseline, which cannot take a message in pieces.
func BenchmarkUTF8Valid(b *testing.B) {
	for _, bc := range utf8BenchTexts {
		p := []byte(bc.text)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if !utf8.Valid(p) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

func BenchmarkAppendAcceptKey(b *testing.B) {
	key := []byte("dGhlIHNhbXBsZSBub25jZQ==")
	buf := make([]byte, 0, 64)
	for b.Loop() {
		AppendAcceptKey(buf[:0], key)
	}
}
