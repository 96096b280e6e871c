package sealed

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keyOf(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestSealOpen(t *testing.T) {
	s, err := New(keyOf(1), nil)
	require.NoError(t, err)
	v := s.Seal([]byte("state"))
	got, err := s.Open(v)
	require.NoError(t, err)
	assert.Equal(t, "state", string(got))
	assert.NotEqual(t, v, s.Seal([]byte("state")), "a fresh nonce each time")
}

func TestRefused(t *testing.T) {
	s, _ := New(keyOf(1), nil)
	v := s.Seal([]byte("some state"))
	raw, _ := base64.RawURLEncoding.DecodeString(v)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	other, _ := New(keyOf(2), nil)
	for name, bad := range map[string]string{
		"empty":              "",
		"not base64":         "***",
		"truncated":          v[:len(v)-4],
		"header only":        base64.RawURLEncoding.EncodeToString(raw[:5]),
		"ciphertext flipped": flip(len(raw) - 1),
		"nonce flipped":      flip(6),
		"key ID flipped":     flip(2),
		"version flipped":    flip(0),
		"another key":        other.Seal([]byte("some state")),
	} {
		_, err := s.Open(bad)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
}

func TestRotation(t *testing.T) {
	old, _ := New(keyOf(1), nil)
	sealedByOld := old.Seal([]byte("x"))
	rotated, err := New(keyOf(2), keyOf(1))
	require.NoError(t, err)
	got, err := rotated.Open(sealedByOld)
	require.NoError(t, err, "the previous key still opens")
	assert.Equal(t, "x", string(got))
	retired, _ := New(keyOf(3), keyOf(2))
	_, err = retired.Open(sealedByOld)
	assert.ErrorIs(t, err, ErrInvalid, "a retired key no longer opens")
	assert.NotEqual(t, old.KeyID(), rotated.KeyID())
}

// TestRotateInPlace: a Sealer rotated while in use seals with the new key
// and still opens what the old one sealed; a bad key changes nothing.
func TestRotateInPlace(t *testing.T) {
	s, _ := New(keyOf(1), nil)
	before := s.Seal([]byte("x"))
	require.NoError(t, s.Rotate(keyOf(2), keyOf(1)))
	got, err := s.Open(before)
	require.NoError(t, err, "the previous key still opens")
	assert.Equal(t, "x", string(got))
	after := s.Seal([]byte("y"))
	other, _ := New(keyOf(2), nil)
	got, err = other.Open(after)
	require.NoError(t, err, "sealed with the new key")
	assert.Equal(t, "y", string(got))
	assert.Error(t, s.Rotate([]byte("short"), nil))
	_, err = s.Open(after)
	assert.NoError(t, err, "a key that does not load changes nothing")
}

func TestKeySize(t *testing.T) {
	_, err := New([]byte("short"), nil)
	assert.Error(t, err)
	_, err = New(keyOf(1), []byte("short"))
	assert.Error(t, err)
}
