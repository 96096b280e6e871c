package serverbin

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
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

// extract writes the repository's tree at rev into dst.
func extract(rev, dst string) error {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("serverbin: the tests do not run in a git checkout: %w", err)
	}
	cmd := exec.Command("git", "archive", "--format=tar", rev) // the whole tree: from the top (in a subdirectory, only that)
	cmd.Dir = strings.TrimSpace(string(top))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	terr := untar(out, dst)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s (the history must hold it: not a shallow clone): %w: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	return terr
}

func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dst, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dst)+string(os.PathSeparator)) {
			return fmt.Errorf("git archive: %q leaves the tree", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, name); err != nil {
				return err
			}
		}
	}
}
