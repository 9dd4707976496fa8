package ws

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"
	"testing"
)

func TestAcceptKey(t *testing.T) {
	// RFC 6455 §1.3: the SHA-1 is 0xb3 0x7a 0x4f 0x2c 0xc0 0x62 0x4f 0x16
	// 0x90 0xf6 0x46 0x06 0xcf 0x38 0x59 0x45 0xb2 0xbe 0xc4 0xea.
	if got := AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("AcceptKey of the RFC's key = %q", got)
	}
	for _, key := range []string{"", "x", strings.Repeat("k", 64), strings.Repeat("k", 65), strings.Repeat("k", 300)} {
		sum := sha1.Sum([]byte(key + acceptGUID))
		want := base64.StdEncoding.EncodeToString(sum[:])
		if got := string(AppendAcceptKey([]byte("Accept: "), []byte(key))); got != "Accept: "+want {
			t.Errorf("AppendAcceptKey(%d bytes) = %q, want %q", len(key), got, want)
		}
	}
}

func TestValidKey(t *testing.T) {
	for key, want := range map[string]bool{
		"dGhlIHNhbXBsZSBub25jZQ==":   true,
		"AAAAAAAAAAAAAAAAAAAAAA==":   true,
		"/////////////////////w==":   true,
		"":                           false,
		"dGhlIHNhbXBsZSBub25jZQ":     false, // unpadded
		"dGhlIHNhbXBsZSBub25jZQ=":    false,
		"dGhlIHNhbXBsZSBub25jZQ===":  false,
		"dGhlIHNhbXBsZSBub25jZa==":   true, // non-zero padding bits: RFC 4648 §3.5 lets decoders accept them
		"dGhlIHNhbXBsZSBub25j\r\n==": false,
		"dGhlIHNhbXBsZSBub25jZ!==":   false,
		"dGhlIHNhbXBsZSBub25jZQ=A":   false,
		"dGhlIHNhbXBsZSBub25jZTI=":   false, // 17 bytes
		" dGhlIHNhbXBsZSBub25jZQ==":  false,
		"dGhlIHNhbXBsZSBub25jZQ-_":   false, // URL alphabet
		"dGhlIHNhbXBsZSBub25jZQ==\n": false,
	} {
		if ValidKey([]byte(key)) != want {
			t.Errorf("ValidKey(%q) = %v, want %v", key, !want, want)
		}
	}
}
