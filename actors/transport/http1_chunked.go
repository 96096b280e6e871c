package transport

import (
	"bytes"
	"math"
	"slices"
)

// The chunked transfer coding of the HTTP/1.x parser (http1_request.go):
// RFC 9112 §7.1, with the framing bounds net/http applies.

// readChunked checks the chunked body at buf[at:] and, once it is whole,
// decodes it into r.chunkBuf. The first pass skips over chunk data, so a
// call on a partial body costs one step per chunk and copies nothing; the
// trailer section may use the room the head left of the head limit.
func (r *httpRequest) readChunked(buf []byte, at int, maxBody int64, trailerRoom int) (int, error) {
	end, total, err := walkChunks(buf[at:], maxBody, trailerRoom, nil)
	if err != nil || end == 0 {
		return 0, err
	}
	dst := slices.Grow(r.chunkBuf[:0], int(total))
	_, _, _ = walkChunks(buf[at:], maxBody, trailerRoom, &dst)
	r.chunkBuf, r.body = dst, dst
	return at + end, nil
}

// walkChunks walks the chunked body at the start of b (RFC 9112 §7.1) and
// returns its length, trailers included, and its decoded size; end is 0
// while it is incomplete. With dst non-nil it appends the data to *dst.
//
// Every chunked line must end in CRLF: unlike the head, a bare LF here is
// refused (RFC 9112 erratum 7633; net/http since CVE-2025-22871), since
// parsers that disagree on chunk boundaries let one request smuggle
// another. For the same reason a chunk size is followed by CRLF or ';'
// directly: the whitespace RFC 9112 §7.1.1 allows before ';' is BWS, which
// no sender may generate (RFC 9110 §5.6.3), and net/http refuses it too.
func walkChunks(b []byte, maxBody int64, trailerRoom int, dst *[]byte) (end int, total int64, err error) {
	var excess int64
	at := 0
	for {
		line, next, err := chunkLine(b, at)
		if err != nil || next == 0 {
			return 0, 0, err
		}
		size, err := chunkSize(line)
		if err != nil {
			return 0, 0, err
		}
		if size > maxBody-total {
			return 0, 0, errContentTooLarge
		}
		total += size
		excess = max(0, excess+int64(len(line))+2-16-2*min(size, 1<<32))
		if excess > maxChunkExcess {
			return 0, 0, errChunked
		}
		at = next
		if size == 0 {
			break
		}
		if int64(len(b)-at) < size {
			return 0, 0, nil
		}
		data := b[at : at+int(size)]
		switch rest := b[at+len(data):]; {
		case len(rest) >= 2 && rest[0] == '\r' && rest[1] == '\n':
		case len(rest) == 0 || len(rest) == 1 && rest[0] == '\r':
			return 0, 0, nil
		default:
			return 0, 0, errChunked
		}
		if dst != nil {
			*dst = append(*dst, data...)
		}
		at += len(data) + 2
	}
	end, err = walkTrailers(b, at, trailerRoom)
	return end, total, err
}

// chunkLine returns the CRLF-terminated line at b[at:] without its CRLF,
// and where the next starts (0 while the line is incomplete).
func chunkLine(b []byte, at int) (line []byte, next int, err error) {
	i := bytes.IndexByte(b[at:], '\n')
	if i < 0 {
		if len(b)-at > maxChunkLine {
			return nil, 0, errChunked
		}
		return nil, 0, nil
	}
	line = b[at : at+i]
	if len(line) > maxChunkLine || len(line) == 0 || line[len(line)-1] != '\r' {
		return nil, 0, errChunked
	}
	return line[:len(line)-1], at + i + 1, nil
}

// chunkSize parses chunk-size [ chunk-ext ]: at most 16 hex digits (as
// net/http) that fit an int64, then nothing or extensions, which are
// ignored but may hold no control characters.
func chunkSize(line []byte) (int64, error) {
	var v uint64
	i := 0
	for ; i < len(line) && isHex(line[i]); i++ {
		if i == 16 {
			return 0, errChunked
		}
		v = v<<4 | uint64(unhex(line[i]))
	}
	if i == 0 || v > math.MaxInt64 {
		return 0, errChunked
	}
	if ext := line[i:]; len(ext) > 0 {
		if ext[0] != ';' {
			return 0, errChunked
		}
		for _, c := range ext[1:] {
			if !isFieldByte(c) {
				return 0, errChunked
			}
		}
	}
	return int64(v), nil
}

// walkTrailers checks the trailer section at b[at:], field lines up to an
// empty line, and returns where it ends (0 while incomplete). The fields
// are ignored. The section, its final CRLF aside, must fit in room, else
// 431; the check comes before any other on a line so that a prefix of b is
// refused for the same reason as b.
func walkTrailers(b []byte, at, room int) (int, error) {
	start := at
	for {
		i := bytes.IndexByte(b[at:], '\n')
		if i < 0 {
			if len(b)-start > room+2 {
				return 0, errHeadTooLarge
			}
			return 0, nil
		}
		next := at + i + 1
		if next-start > room+2 {
			return 0, errHeadTooLarge
		}
		line := b[at : at+i]
		if len(line) == 0 || line[len(line)-1] != '\r' {
			return 0, errChunked
		}
		if line = line[:len(line)-1]; len(line) == 0 {
			return next, nil
		}
		if _, err := parseFieldLine(line); err != nil {
			return 0, err
		}
		at = next
	}
}
