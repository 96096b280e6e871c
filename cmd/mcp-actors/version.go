package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// version is the release, set at build time with
// -ldflags "-X main.version=v0.2.0"; empty, the module's version as the go
// command stamped it (go install …@v0.2.0, or a pseudo-version from the
// checkout's commit), and "dev" without either.
var version string

// release returns the build's version.
func release() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionCmd prints the release and the cluster's wire formats: what a
// node of this release writes and what it reads (docs/operations.md,
// Upgrades).
type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Printf("mcp-actors %s (%s)\n", release(), runtime.Version())
	for _, f := range cluster.Formats() {
		fmt.Printf("  %-22s  writes v%d, reads v%d to v%d\n", f.Name, f.Writes, f.ReadsFrom, f.Writes)
	}
	return nil
}
