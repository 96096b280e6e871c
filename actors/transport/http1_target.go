package transport

import (
	"bytes"
	"math"
	"net/http"
	"net/netip"
)

// The request-target and Host checks of the HTTP/1.x parser
// (http1_request.go): RFC 9112 §3.2 and RFC 3986.

// targetPath checks target against the form method calls for
// (RFC 9112 §3.2) and returns its path and, for an absolute-form target,
// its authority (see httpRequest).
func targetPath(method, target []byte) (path, authority []byte, ok bool) {
	if len(target) == 0 {
		return nil, nil, false
	}
	for i := 0; i < len(target); i++ {
		switch c := target[i]; {
		case c <= ' ' || c >= 0x7f || c == '#':
			return nil, nil, false
		case c == '%':
			if i+2 >= len(target) || !isHex(target[i+1]) || !isHex(target[i+2]) {
				return nil, nil, false
			}
		}
	}
	switch {
	case string(method) == http.MethodConnect:
		return nil, nil, validAuthority(target, true)
	case target[0] == '/':
		path, _, _ := bytes.Cut(target, []byte{'?'})
		return path, nil, true
	case string(target) == "*":
		return target, nil, string(method) == http.MethodOptions
	}
	return absolutePath(target)
}

// absolutePath returns the path and the authority of an absolute-form
// target, scheme "://" authority [path] ["?" query]. The authority may
// carry no userinfo (RFC 9110 §4.2.4) and its host may not be empty
// (§4.2.1).
func absolutePath(target []byte) (path, authority []byte, ok bool) {
	i := 0
	for i < len(target) && isSchemeChar(target[i], i == 0) {
		i++
	}
	if i == 0 || !bytes.HasPrefix(target[i:], []byte("://")) {
		return nil, nil, false
	}
	rest := target[i+3:]
	end := bytes.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority = rest[:end]
	if !validAuthority(authority, false) {
		return nil, nil, false
	}
	path, _, _ = bytes.Cut(rest[end:], []byte{'?'})
	if len(path) == 0 {
		path = rootPath
	}
	return path, authority, true
}

// validAuthority reports whether a is host [":" port] with a non-empty
// host: a name of letters, digits and "-._~", or a bracketed IPv6
// address. That is stricter than RFC 3986's reg-name, which also allows
// sub-delims and percent-encoding no real host name uses.
func validAuthority(a []byte, needPort bool) bool {
	var host, port []byte
	var hasPort bool
	if len(a) > 0 && a[0] == '[' {
		end := bytes.IndexByte(a, ']')
		if end < 0 || !validIPv6(a[1:end]) {
			return false
		}
		host = a[:end+1]
		if rest := a[end+1:]; len(rest) > 0 {
			if rest[0] != ':' {
				return false
			}
			port, hasPort = rest[1:], true
		}
	} else {
		host, port, hasPort = bytes.Cut(a, []byte{':'})
		for _, c := range host {
			if !isHostChar(c) {
				return false
			}
		}
	}
	return len(host) > 0 && !(needPort && len(port) == 0) && (!hasPort || validPort(port))
}

// validIPv6 reports whether b is an IPv6 address without a zone, as
// RFC 3986's IP-literal requires (an IPv4 address may not be bracketed).
// netip copies b: the one allocation a request may cost, and only one
// that names its host by IPv6 address.
func validIPv6(b []byte) bool {
	for _, c := range b {
		if !isHex(c) && c != ':' && c != '.' {
			return false
		}
	}
	addr, err := netip.ParseAddr(string(b))
	return err == nil && addr.Is6()
}

// validPort reports whether p is empty (RFC 3986 allows ":" alone) or a
// port number.
func validPort(p []byte) bool {
	if len(p) > 5 {
		return false
	}
	v := 0
	for _, c := range p {
		if !isDigit(c) {
			return false
		}
		v = v*10 + int(c-'0')
	}
	return v <= math.MaxUint16
}

// isSchemeChar reports whether c may be at this place in a URI scheme:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1).
func isSchemeChar(c byte, first bool) bool {
	alpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	return alpha || !first && (isDigit(c) || c == '+' || c == '-' || c == '.')
}

func isHostChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
