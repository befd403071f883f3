package scaffold

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFile writes data to path; the undo removes the file if it is new,
// or puts back its old content.
func writeFile(path string, data []byte, u *undo) error {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := mkdirAll(filepath.Dir(path), u); err != nil {
			return err
		}
		u.add(func() error { return os.Remove(path) })
	case err != nil:
		return err
	default:
		u.add(func() error { return os.WriteFile(path, old, 0o644) })
	}
	return os.WriteFile(path, data, 0o644)
}

// mkdirAll creates dir and its missing parents; the undo removes those it
// created.
func mkdirAll(dir string, u *undo) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		u.add(func() error { return os.Remove(d) })
	}
	return nil
}
