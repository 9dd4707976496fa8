package wire

import (
	"bytes"
	"net/netip"
)

// checkTarget accepts the four request-target forms of RFC 9112 §3.2:
// origin-form ("/p?q"), absolute-form ("http://h/p"), authority-form
// ("host:port", CONNECT only) and asterisk-form ("*"). Control bytes, SP
// and DEL are rejected anywhere in it; bytes ≥ 0x80 are let through as
// net/http lets them through. Every input url.ParseRequestURI rejects is
// rejected too (net/http answers those with 400), without allocating
// except for an IP literal in an authority.
func checkTarget(method, t []byte) error {
	if len(t) == 0 {
		return ErrBadTarget
	}
	for _, c := range t {
		if c <= ' ' || c == 0x7f {
			if c == '\r' {
				return ErrBareCR
			}
			return ErrBadTarget
		}
	}
	switch {
	case t[0] == '/':
		if !validPathEscapes(t) {
			return ErrBadTarget
		}
		return nil
	case len(t) == 1 && t[0] == '*':
		return nil
	case string(method) == "CONNECT":
		// authority-form is exactly uri-host ":" port (§3.2.3).
		if !validAuthority(t, true) {
			return ErrBadTarget
		}
		return nil
	case hasSchemePrefix(t):
		rest := t[bytes.IndexByte(t, ':')+3:] // after "://"
		end := len(rest)
		if i := bytes.IndexAny(rest, "/?"); i >= 0 {
			end = i
		}
		if !validAuthority(rest[:end], false) || !validPathEscapes(rest[end:]) {
			return ErrBadTarget
		}
		return nil
	}
	return ErrBadTarget
}

// validPathEscapes reports whether every '%' in the path of t (the part
// before the first '?') starts a pct-encoded triplet (RFC 3986 §2.1). The
// query is not checked, as net/url does not check it.
func validPathEscapes(t []byte) bool {
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		t = t[:q]
	}
	for {
		i := bytes.IndexByte(t, '%')
		if i < 0 {
			return true
		}
		if i+2 >= len(t) || !isHex(t[i+1]) || !isHex(t[i+2]) {
			return false
		}
		t = t[i+3:]
	}
}

// validAuthority reports whether a is uri-host [ ":" port ] (RFC 3986
// §3.2.2–3; a port is required when needPort), stricter than net/url: the
// host may not be empty (RFC 9110 §4.2.1), userinfo is refused (RFC 9110
// §4.2.4 asks recipients to treat it as an error), a reg-name may not be
// percent-encoded, and an IP literal must be a plain IPv6 address without
// a zone.
func validAuthority(a []byte, needPort bool) bool {
	var port []byte
	if len(a) > 0 && a[0] == '[' {
		end := bytes.IndexByte(a, ']')
		if end < 0 {
			return false
		}
		for _, c := range a[1:end] {
			if !isHex(c) && c != ':' && c != '.' {
				return false
			}
		}
		ip, err := netip.ParseAddr(string(a[1:end]))
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return false
		}
		port = a[end+1:]
	} else {
		i := 0
		for i < len(a) && regNameByte[a[i]] {
			i++
		}
		if i == 0 {
			return false
		}
		port = a[i:]
	}
	if len(port) == 0 {
		return !needPort
	}
	if port[0] != ':' || (needPort && len(port) == 1) {
		return false
	}
	for _, c := range port[1:] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// hasSchemePrefix reports whether t starts with "http://" or "https://",
// without regard to case.
func hasSchemePrefix(t []byte) bool {
	return (len(t) > 7 && EqualFold(t[:7], "http://")) || (len(t) > 8 && EqualFold(t[:8], "https://"))
}
