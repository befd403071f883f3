package harnesscmd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv("HARNESSCMD_FAIL") != "" { // the command of TestMainExitsOneOnAnError
		Main("demo", func(context.Context) error { return errors.New("it broke") })
		os.Exit(0) // not reached
	}
	os.Exit(m.Run())
}

func TestMainRunsWithALiveContext(t *testing.T) {
	ran := false
	Main("demo", func(ctx context.Context) error {
		ran = ctx.Err() == nil
		return nil
	})
	if !ran {
		t.Fatal("run did not get a live context")
	}
}

func TestMainExitsOneOnAnError(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HARNESSCMD_FAIL=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	if got := stderr.String(); got != "demo: it broke\n" {
		t.Fatalf("stderr %q, want %q", got, "demo: it broke\n")
	}
}
