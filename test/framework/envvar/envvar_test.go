package envvar

import (
	"testing"
	"time"
)

func TestInt(t *testing.T) {
	for v, want := range map[string]int{"": 7, "3": 3} {
		t.Setenv("ENVVAR_TEST", v)
		if got, err := Int("ENVVAR_TEST", 7); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"0", "-2", "x", "1.5"} {
		t.Setenv("ENVVAR_TEST", v)
		if _, err := Int("ENVVAR_TEST", 7); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

func TestDuration(t *testing.T) {
	for v, want := range map[string]struct {
		d   time.Duration
		set bool
	}{"": {0, false}, "0": {0, true}, "90s": {90 * time.Second, true}} {
		t.Setenv("ENVVAR_TEST", v)
		d, set, err := Duration("ENVVAR_TEST")
		if err != nil || d != want.d || set != want.set {
			t.Errorf("%q: %s, %v, %v; want %s, %v", v, d, set, err, want.d, want.set)
		}
	}
	for _, v := range []string{"-1s", "3", "soon"} {
		t.Setenv("ENVVAR_TEST", v)
		if _, _, err := Duration("ENVVAR_TEST"); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

func TestString(t *testing.T) {
	t.Setenv("ENVVAR_TEST", "")
	if got := String("ENVVAR_TEST", "def"); got != "def" {
		t.Errorf("unset: %q", got)
	}
	t.Setenv("ENVVAR_TEST", "x")
	if got := String("ENVVAR_TEST", "def"); got != "x" {
		t.Errorf("set: %q", got)
	}
}
