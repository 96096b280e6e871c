package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	mcpactors "github.com/mcp-actors/mcp-actors"
)

// readStateKey reads a request state key from file ("" : none): 32 bytes
// written as base64 (standard or URL alphabet) or hex, surrounding space
// ignored.
func readStateKey(flag, file string) ([]byte, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	text := strings.TrimSpace(string(b))
	for _, decode := range []func(string) ([]byte, error){
		hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString, base64.RawURLEncoding.DecodeString,
	} {
		if k, err := decode(text); err == nil && len(k) == mcpactors.RequestStateKeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%s %s: not %d bytes in base64 or hex (make one with: openssl rand -base64 %d)", flag, file, mcpactors.RequestStateKeySize, mcpactors.RequestStateKeySize)
}
