package scaffold

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
)

// copyChart writes the files the chart was loaded from (its .helmignore
// applied; subcharts as they were) to dir/rel, replacing what is there.
// The undo puts back what was there.
func copyChart(ch *chart.Chart, src, dir, rel string, u *undo) (Change, error) {
	dest := filepath.Join(dir, rel)
	if a, b := abs(src), abs(dest); a == b {
		return Change{Path: rel, Action: "unchanged"}, nil // packaged in place
	}
	want := map[string][]byte{}
	for _, f := range ch.Raw {
		want[filepath.FromSlash(f.Name)] = f.Data
	}
	have, err := readTree(dest)
	if err != nil {
		return Change{}, err
	}
	switch {
	case have == nil:
		if err := mkdirAll(filepath.Dir(dest), u); err != nil { // charts/ too goes on rollback
			return Change{}, err
		}
		u.add(func() error { return os.RemoveAll(dest) })
		return Change{Path: rel, Action: "created"}, writeTree(dest, want)
	case sameTree(have, want):
		return Change{Path: rel, Action: "unchanged"}, nil
	}
	// Write the new chart beside the old one, then swap; the old one is
	// kept until the change is committed.
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".create-api-")
	if err != nil {
		return Change{}, err
	}
	u.cleanup(func() error { return os.RemoveAll(tmp) })
	if err := writeTree(filepath.Join(tmp, "chart"), want); err != nil {
		return Change{}, err
	}
	if err := os.Rename(dest, filepath.Join(tmp, "old")); err != nil {
		return Change{}, err
	}
	if err := os.Rename(filepath.Join(tmp, "chart"), dest); err != nil {
		return Change{}, errors.Join(err, os.Rename(filepath.Join(tmp, "old"), dest))
	}
	u.add(func() error {
		return errors.Join(os.RemoveAll(dest), os.Rename(filepath.Join(tmp, "old"), dest))
	})
	return Change{Path: rel, Action: "updated"}, nil
}

// readTree reads every file under dir; nil when dir does not exist.
func readTree(dir string) (map[string][]byte, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return nil
	})
	return out, err
}

func writeTree(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func sameTree(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return filepath.Clean(a)
}
