package serverbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// AtCommit builds ./cmd/mcp-actors as the repository's history holds it at
// rev (a tag or a commit): the release an upgrade starts from. The tree is
// read with git archive from the repository the tests run in, so a clone
// without that history (a shallow one) cannot build it: the error says so.
// The build is made once per test binary, without -race (it is another
// release's code, not the one under test).
func AtCommit(t testing.TB, rev string) string {
	t.Helper()
	v, _ := builds.LoadOrStore("history:"+rev, &binary{})
	b := v.(*binary)
	b.once.Do(func() { b.path, b.err = buildAt(rev) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func buildAt(rev string) (string, error) {
	if dir == "" {
		return "", errors.New("serverbin: Main did not run")
	}
	src := filepath.Join(dir, "src-"+rev)
	if err := extract(rev, src); err != nil {
		// A shallow clone lacks the commit: ask the clone's origin for it
		// once, then try again.
		if out, ferr := exec.Command("git", "fetch", "--quiet", "origin", rev).CombinedOutput(); ferr != nil {
			return "", fmt.Errorf("%w (and git fetch origin %s: %v: %s)", err, rev, ferr, strings.TrimSpace(string(out)))
		}
		if err := os.RemoveAll(src); err != nil {
			return "", err
		}
		if err := extract(rev, src); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "mcp-actors-"+rev)
	cmd := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.version="+rev, "./cmd/mcp-actors")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building mcp-actors at %s: %w\n%s", rev, err, out)
	}
	return bin, nil
}

// extract writes the repository's tree at rev into dst: git archive,
// unpacked by tar.
func extract(rev, dst string) error {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("serverbin: the tests do not run in a git checkout: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", rev) // the whole tree: from the top (in a subdirectory, only that)
	archive.Dir = strings.TrimSpace(string(top))
	var archiveErr, tarErr strings.Builder
	archive.Stderr = &archiveErr
	untar := exec.Command("tar", "-x", "-C", dst)
	untar.Stderr = &tarErr
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return err
	}
	if err := untar.Start(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	aerr := archive.Run()
	terr := untar.Wait()
	switch {
	case aerr != nil:
		return fmt.Errorf("git archive %s (the history must hold it: not a shallow clone): %w: %s", rev, aerr, strings.TrimSpace(archiveErr.String()))
	case terr != nil:
		return fmt.Errorf("tar -x of git archive %s: %w: %s", rev, terr, strings.TrimSpace(tarErr.String()))
	}
	return nil
}
