package mcpactors

import (
	"encoding/base64"
	"slices"
	"strings"

	"github.com/mcp-actors/mcp-actors/messages"
)

// index is an immutable, key-sorted set of catalog items. Changing it makes
// a copy, so readers use a snapshot without locks.
type index[T any] struct {
	items map[string]T
	keys  []string // sorted
}

func newIndex[T any]() *index[T] { return &index[T]{items: map[string]T{}} }

// get returns the item under key.
func (ix *index[T]) get(key string) (T, bool) {
	v, ok := ix.items[key]
	return v, ok
}

// with returns a copy holding v under key (replacing any item there).
func (ix *index[T]) with(key string, v T) *index[T] {
	out := &index[T]{items: make(map[string]T, len(ix.items)+1)}
	for k, item := range ix.items {
		out.items[k] = item
	}
	out.items[key] = v
	if _, existed := ix.items[key]; existed {
		out.keys = ix.keys
	} else {
		i, _ := slices.BinarySearch(ix.keys, key)
		out.keys = slices.Insert(slices.Clone(ix.keys), i, key)
	}
	return out
}

// without returns a copy lacking keys, and whether anything was removed.
func (ix *index[T]) without(keys ...string) (*index[T], bool) {
	removed := false
	for _, k := range keys {
		if _, ok := ix.items[k]; ok {
			removed = true
		}
	}
	if !removed {
		return ix, false
	}
	out := &index[T]{items: make(map[string]T, len(ix.items))}
	for k, item := range ix.items {
		if !slices.Contains(keys, k) {
			out.items[k] = item
		}
	}
	for _, k := range ix.keys {
		if _, ok := out.items[k]; ok {
			out.keys = append(out.keys, k)
		}
	}
	return out, true
}

// page returns up to size items after the cursor, in key order, and the
// cursor of the next page ("" on the last). A cursor that this index did not
// make for kind gets -32602.
func (ix *index[T]) page(kind, cursor string, size int) ([]T, string, *messages.Error) {
	start := 0
	if cursor != "" {
		after, ok := decodeCursor(kind, cursor)
		if !ok {
			return nil, "", messages.Errorf(messages.CodeInvalidParams, "invalid params: invalid cursor")
		}
		start, _ = slices.BinarySearch(ix.keys, after)
		if start < len(ix.keys) && ix.keys[start] == after {
			start++
		}
	}
	end := min(start+size, len(ix.keys))
	out := make([]T, 0, end-start)
	for _, k := range ix.keys[start:end] {
		out = append(out, ix.items[k])
	}
	next := ""
	if end < len(ix.keys) {
		next = encodeCursor(kind, ix.keys[end-1])
	}
	return out, next, nil
}

// Cursors are opaque to clients: base64url of "kind" NUL "last key".
func encodeCursor(kind, after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "\x00" + after))
}

func decodeCursor(kind, cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	k, after, ok := strings.Cut(string(b), "\x00")
	return after, ok && k == kind
}
