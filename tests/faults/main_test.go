package faults_test

import (
	"testing"

	"github.com/mcp-actors/mcp-actors/internal/serverbin"
)

func TestMain(m *testing.M) { serverbin.Main(m, "faults") }
