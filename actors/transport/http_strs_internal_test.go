package transport

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestStrsReusesStringsItMade(t *testing.T) {
	var s strs
	assert.Equal(t, "", s.get(nil))
	host := s.get([]byte("127.0.0.1:8080"))
	assert.Equal(t, "127.0.0.1:8080", host)
	again := s.get([]byte("127.0.0.1:8080"))
	assert.Same(t, unsafe.StringData(host), unsafe.StringData(again), "the same string, not a copy")
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.get([]byte("127.0.0.1:8080")) }))

	for i := range len(s.vals) {
		s.get([]byte("value-" + strconv.Itoa(i)))
	}
	evicted := s.get([]byte("127.0.0.1:8080"))
	assert.Equal(t, host, evicted)
	assert.NotSame(t, unsafe.StringData(host), unsafe.StringData(evicted), "the oldest went: a new copy")
}
