package transport

// strs keeps the header values of a connection's requests as strings, so
// that the same Host, Accept or session ID on its next request is not
// copied again. It is used only by the goroutine serving the connection's
// current request.
type strs struct {
	vals [6]string
	next uint8
}

// get returns b as a string, one already made when it can.
func (t *strs) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, v := range t.vals {
		if v == string(b) { // compared in place: no copy
			return v
		}
	}
	v := string(b)
	t.vals[t.next] = v
	t.next = (t.next + 1) % uint8(len(t.vals))
	return v
}
