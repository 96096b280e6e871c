// Package sealed seals and opens the requestState of modern (2026-07-28)
// requests: opaque to the client, which echoes it back, and integrity- and
// confidentiality-protected with AES-256-GCM under a key named by its ID.
//
// A sealed value is base64url (no padding) of
//
//	version (1 byte, 1) | key ID (4 bytes) | nonce (12 bytes) | ciphertext+tag
//
// where the version and key ID are the AEAD's additional data. A Sealer
// seals with its current key and opens with the current or the one
// previous key (rotation: a node given a new key still opens what its old
// key sealed, while clients finish their rounds).
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync/atomic"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

const (
	version   = 1
	headerLen = 1 + 4
	nonceLen  = 12
)

// ErrInvalid reports a sealed value that cannot be opened: malformed,
// truncated, tampered with, or sealed with a key this Sealer does not
// have. It says no more, on purpose.
var ErrInvalid = errors.New("sealed: invalid")

// Sealer seals with one key and opens with it or a previous one. It is
// safe for concurrent use, Rotate included.
type Sealer struct {
	keys atomic.Pointer[keyring]
}

// keyring is a Sealer's keys: the one it seals with, and the one before.
type keyring struct {
	current key
	prev    *key
}

type key struct {
	id   [4]byte
	aead cipher.AEAD
}

// New returns a Sealer that seals with current and also opens what
// previous sealed (previous may be nil). Keys are KeySize bytes.
func New(current, previous []byte) (*Sealer, error) {
	s := &Sealer{}
	if err := s.Rotate(current, previous); err != nil {
		return nil, err
	}
	return s, nil
}

// Rotate makes the Sealer seal with current from now on and open what
// current or previous (which may be nil) sealed; on an error it keeps its
// keys.
func (s *Sealer) Rotate(current, previous []byte) error {
	c, err := newKey(current)
	if err != nil {
		return fmt.Errorf("the state key: %w", err)
	}
	ring := &keyring{current: c}
	if previous != nil {
		p, err := newKey(previous)
		if err != nil {
			return fmt.Errorf("the previous state key: %w", err)
		}
		ring.prev = &p
	}
	s.keys.Store(ring)
	return nil
}

// Ephemeral returns a Sealer with a random key of its own: what it seals
// opens only in this process (a lone node, stdio).
func Ephemeral() *Sealer {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k)
	s, _ := New(k, nil)
	return s
}

func newKey(b []byte) (key, error) {
	if len(b) != KeySize {
		return key{}, fmt.Errorf("must be %d bytes, is %d", KeySize, len(b))
	}
	block, err := aes.NewCipher(b)
	if err != nil {
		return key{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, err
	}
	sum := sha256.Sum256(append([]byte("mcp-actors request state key\x00"), b...))
	k := key{aead: aead}
	copy(k.id[:], sum[:4])
	return k, nil
}

// KeyID returns the current key's ID (hex), for logs and docs.
func (s *Sealer) KeyID() string { return fmt.Sprintf("%x", s.keys.Load().current.id) }

// Seal encrypts plain.
func (s *Sealer) Seal(plain []byte) string {
	k := &s.keys.Load().current
	buf := make([]byte, headerLen+nonceLen, headerLen+nonceLen+len(plain)+k.aead.Overhead())
	buf[0] = version
	copy(buf[1:headerLen], k.id[:])
	_, _ = rand.Read(buf[headerLen : headerLen+nonceLen])
	buf = k.aead.Seal(buf, buf[headerLen:headerLen+nonceLen], plain, buf[:headerLen])
	return base64.RawURLEncoding.EncodeToString(buf)
}

// Open decrypts what Seal sealed, with the key its ID names. Any failure
// is ErrInvalid.
func (s *Sealer) Open(sealed string) ([]byte, error) {
	buf, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(buf) < headerLen+nonceLen || buf[0] != version {
		return nil, ErrInvalid
	}
	ring := s.keys.Load()
	var k *key
	switch {
	case [4]byte(buf[1:headerLen]) == ring.current.id:
		k = &ring.current
	case ring.prev != nil && [4]byte(buf[1:headerLen]) == ring.prev.id:
		k = ring.prev
	default:
		return nil, ErrInvalid
	}
	if len(buf) < headerLen+nonceLen+k.aead.Overhead() {
		return nil, ErrInvalid
	}
	plain, err := k.aead.Open(nil, buf[headerLen:headerLen+nonceLen], buf[headerLen+nonceLen:], buf[:headerLen])
	if err != nil {
		return nil, ErrInvalid
	}
	return plain, nil
}
