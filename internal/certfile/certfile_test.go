package certfile

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writePair writes a self-signed certificate with serial and expiry, and
// its key, to dir; it returns the two files.
func writePair(t *testing.T, dir string, serial int64, notAfter time.Time) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certFile, keyFile
}

// touch moves both files' modification times on, as a rewrite within the
// file system's time resolution may not.
func touch(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		at := fi.ModTime().Add(time.Second)
		require.NoError(t, os.Chtimes(f, at, at))
	}
}

func serial(t *testing.T, r *Reloader) int64 {
	t.Helper()
	c, err := r.GetCertificate(nil)
	require.NoError(t, err)
	return c.Leaf.SerialNumber.Int64()
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	first := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	certFile, keyFile := writePair(t, dir, 1, first)
	var failures []error
	r, err := New(certFile, keyFile, func(err error) { failures = append(failures, err) })
	require.NoError(t, err)
	r.every = 0 // look at every handshake
	assert.EqualValues(t, 1, serial(t, r))
	assert.True(t, r.NotAfter().Equal(first))

	// Renewed in place: the next handshake gets the new pair.
	second := first.Add(48 * time.Hour)
	writePair(t, dir, 2, second)
	touch(t, certFile, keyFile)
	assert.EqualValues(t, 2, serial(t, r))
	assert.True(t, r.NotAfter().Equal(second))

	// A key that does not match: the last good pair stays, reported once.
	other := t.TempDir()
	_, otherKey := writePair(t, other, 3, second)
	b, err := os.ReadFile(otherKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keyFile, b, 0o600))
	touch(t, keyFile)
	assert.EqualValues(t, 2, serial(t, r))
	assert.EqualValues(t, 2, serial(t, r))
	require.Len(t, failures, 1)
	assert.Contains(t, failures[0].Error(), "tls.crt")

	// Throttled: within checkEvery the files are not looked at.
	r.every = time.Hour
	writePair(t, dir, 4, second)
	touch(t, certFile, keyFile)
	assert.EqualValues(t, 2, serial(t, r))
}

func TestNewRefusesABadPair(t *testing.T) {
	_, err := New(filepath.Join(t.TempDir(), "missing.crt"), "missing.key", nil)
	require.Error(t, err)
}
