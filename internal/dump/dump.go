// Package dump writes a problem's generated SQL dump to disk once: only
// when the file there does not already start with the expected header line.
package dump

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Ensure writes a dump to path with write unless a file there already starts
// with the line header (same generator version, seed and sizes). It writes a
// temporary file in the same directory and renames it, so a dump at path is
// always complete. It reports whether it wrote.
func Ensure(path, header string, write func(io.Writer) error) (bool, error) {
	if f, err := os.Open(path); err == nil {
		line, _ := bufio.NewReader(io.LimitReader(f, 1024)).ReadString('\n')
		f.Close()
		if strings.TrimSuffix(line, "\n") == header {
			return false, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	return true, nil
}
