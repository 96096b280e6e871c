// Package loopback finds loopback ports for processes about to listen on
// them: a test cluster's route ports, which must be known before the
// nodes that dial them start, and which a restarted node takes again.
//
// A port reserved by listening on port 0 and then freed comes from the
// system's ephemeral range, the range every outgoing connection and every
// other port-0 listener on the machine draws from: between the reservation
// and the process's listen (or a node's restart), another test may get it.
// The ports here come from below that range, where only a process that
// names a port gets one, at random, and each is checked free.
package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// low is the first port handed out; below it are well-known services.
const low = 10000

// defaultEphemeral is the start of Linux's default ephemeral range, used
// where the system does not say.
const defaultEphemeral = 32768

// Ports returns n distinct loopback ports free right now, outside the
// system's ephemeral range.
func Ports(n int) ([]int, error) {
	high := ephemeralStart()
	seen := make(map[int]bool, n)
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries >= 100*n {
			return nil, fmt.Errorf("loopback: no free port found in %d tries between %d and %d", tries, low, high)
		}
		p := low + rand.IntN(high-low)
		if seen[p] {
			continue
		}
		seen[p] = true
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		if err := ln.Close(); err != nil {
			return nil, fmt.Errorf("loopback: freeing port %d: %w", p, err)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// Addr returns a loopback address ("127.0.0.1:port") free right now,
// outside the system's ephemeral range.
func Addr() (string, error) {
	ps, err := Ports(1)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ps[0])), nil
}

// ephemeralStart returns the first port of the system's ephemeral range
// (Linux says it in /proc), or the Linux default.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeral
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\t")
	p, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || p < low+1000 {
		return defaultEphemeral
	}
	return p
}
