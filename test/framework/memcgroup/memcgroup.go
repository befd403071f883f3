// Package memcgroup makes a memory cgroup with a limit for a test's child
// process: what a container's memory limit is to the process inside it.
// The cgroup is a child of the test process's own (cgroup v1's memory
// controller, or cgroup v2 where memory is delegated to it).
package memcgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// New makes a memory cgroup limited to limit bytes and returns the file a
// process writes its PID into to join it (cgroup.procs). The cgroup is
// removed when the test ends: call New before starting the processes
// that join it, so that their cleanups (which stop them) run first. The
// test is skipped, saying why, where the machine gives it no memory cgroup
// it may write.
func New(t testing.TB, limit int64) string {
	t.Helper()
	dir, limitFile, err := own()
	if err != nil {
		t.Skipf("no memory cgroup to make a child of: %v", err)
	}
	child := filepath.Join(dir, fmt.Sprintf("chartkeeper-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		// The processes are gone; the kernel may take a moment to say so.
		var err error
		for range 50 {
			if err = os.Remove(child); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("removing cgroup %s: %v", child, err)
	})
	if err := os.WriteFile(filepath.Join(child, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		t.Skipf("cannot limit a memory cgroup: %v", err)
	}
	return filepath.Join(child, "cgroup.procs")
}

// own returns the directory of this process's memory cgroup and the name
// of its limit file there.
func own() (dir, limitFile string, err error) {
	paths, err := cgroupPaths()
	if err != nil {
		return "", "", err
	}
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer mounts.Close()
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		root, point := f[3], f[4]
		switch {
		case g[0] == "cgroup" && hasOption(g[2], "memory"):
			if p, ok := paths["memory"]; ok {
				return under(point, root, p), "memory.limit_in_bytes", nil
			}
		case g[0] == "cgroup2":
			if p, ok := paths[""]; ok && delegatesMemory(under(point, root, p)) {
				return under(point, root, p), "memory.max", nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", errors.New("neither cgroup v1's memory controller nor cgroup v2 with memory is mounted for this process")
}

// cgroupPaths reads /proc/self/cgroup: the path per controller ("" for
// the cgroup v2 hierarchy).
func cgroupPaths() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

func hasOption(options, want string) bool {
	for _, o := range strings.Split(options, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// under is the directory of cgroup path p in a hierarchy mounted at point
// from root.
func under(point, root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = p
	}
	return filepath.Join(point, rel)
}

// delegatesMemory reports whether a cgroup v2 directory hands the memory
// controller to its children.
func delegatesMemory(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	return err == nil && hasOption(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ","), "memory")
}
