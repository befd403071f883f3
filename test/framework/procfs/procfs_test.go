package procfs

import (
	"os"
	"strings"
	"testing"
)

func TestStatAndStatusOfThisProcess(t *testing.T) {
	f, err := Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if f[0] != "R" && f[0] != "S" { // field 3: state
		t.Fatalf("state %q", f[0])
	}
	if _, err := Stat(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
	v, ok, err := Status(os.Getpid(), "VmHWM")
	if err != nil || !ok || !strings.HasSuffix(v, " kB") {
		t.Fatalf("VmHWM = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := Status(os.Getpid(), "NoSuchLine"); ok || err != nil {
		t.Fatalf("a missing line: ok %v, err %v", ok, err)
	}
}
