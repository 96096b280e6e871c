package messages

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// This file is a small validating JSON scanner for the hot path: it checks
// that a message is well-formed JSON and picks out the raw text of its
// top-level members in one pass, without building values. It accepts
// exactly what encoding/json accepts (RFC 8259, invalid UTF-8 inside
// strings included) up to the same nesting depth.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// scanError describes where a scan failed, for a parse error message.
type scanError struct {
	msg string
	off int
}

func (e *scanError) Error() string { return e.msg + " at offset " + strconv.Itoa(e.off) }

type scanner struct {
	data   []byte
	pos    int
	err    *scanError
	spaced bool // whitespace outside strings was skipped: the text is not compact
}

func (s *scanner) fail(msg string) bool {
	if s.err == nil {
		s.err = &scanError{msg: msg, off: s.pos + 1}
	}
	return false
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
			s.spaced = true
		default:
			return
		}
	}
}

// value skips one JSON value, validating it.
func (s *scanner) value(depth int) bool {
	s.ws()
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of JSON input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth+1, nil)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail("invalid character " + strconv.QuoteRune(rune(s.data[s.pos])) + " looking for beginning of value")
}

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.fail("invalid literal")
	}
	s.pos += len(lit)
	return true
}

// object skips an object; member, when not nil, is called with each key's
// raw text (quotes included) and the raw text of its value.
func (s *scanner) object(depth int, member func(key, val []byte)) bool {
	if depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	s.pos++ // {
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return true
	}
	for {
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.fail("expected a string key")
		}
		key, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.fail("expected ':' after object key")
		}
		s.pos++
		s.ws()
		start := s.pos
		if !s.value(depth) {
			return false
		}
		if member != nil {
			member(key, s.data[start:s.pos])
		}
		s.ws()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return true
		default:
			return s.fail("expected ',' or '}' after object value")
		}
	}
}

func (s *scanner) array(depth int) bool {
	if depth > maxDepth {
		return s.fail("exceeded max depth")
	}
	s.pos++ // [
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		s.ws()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON input")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return true
		default:
			return s.fail("expected ',' or ']' after array element")
		}
	}
}

// str skips a string and returns its raw text, quotes included.
func (s *scanner) str() ([]byte, bool) {
	start := s.pos
	s.pos++ // "
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.data[start:s.pos], true
		case c == '\\':
			if s.pos+1 >= len(s.data) {
				return nil, s.fail("unexpected end of JSON input")
			}
			switch s.data[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.data) {
					return nil, s.fail("unexpected end of JSON input")
				}
				for _, h := range s.data[s.pos+2 : s.pos+6] {
					if !isHex(h) {
						return nil, s.fail("invalid character in \\u escape")
					}
				}
				s.pos += 6
			default:
				return nil, s.fail("invalid escape in string")
			}
		case c < 0x20:
			return nil, s.fail("invalid control character in string")
		default:
			s.pos++
		}
	}
	return nil, s.fail("unexpected end of JSON input")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *scanner) number() bool {
	d := s.data
	if d[s.pos] == '-' {
		s.pos++
	}
	if s.pos >= len(d) {
		return s.fail("unexpected end of JSON input")
	}
	switch {
	case d[s.pos] == '0':
		s.pos++
	case d[s.pos] >= '1' && d[s.pos] <= '9':
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	default:
		return s.fail("invalid character in numeric literal")
	}
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return false
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	if s.pos == start {
		return s.fail("invalid character in numeric literal")
	}
	return true
}

// unquote returns the Go string a raw JSON string stands for. A string
// without escapes or invalid UTF-8 is sliced, not decoded.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	simple := true
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		return string(inner), true
	}
	var out string
	if json.Unmarshal(raw, &out) != nil {
		return "", false
	}
	return out, true
}
