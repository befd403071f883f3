package procfs

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Stat returns the fields of /proc/<pid>/stat from field 3 (state) on, so
// that Stat(pid)[n-3] is field n of proc(5). The command name (field 2) is
// skipped: it is in parentheses and may hold spaces.
func Stat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat format: no command name", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat format: %d fields", pid, len(fields))
	}
	return fields, nil
}

// Status returns the value of one line of /proc/<pid>/status ("VmHWM" gives
// "123 kB"), and false if the file has no such line.
func Status(pid int, name string) (string, bool, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			return strings.TrimSpace(rest), true, nil
		}
	}
	return "", false, sc.Err()
}
