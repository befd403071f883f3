package cli

import (
	"context"
	"errors"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

func TestMemoryLimitFollowsTheContainer(t *testing.T) {
	const gib = 1 << 30
	limited := memlimit.Limit(gib)
	unlimited := func() (uint64, error) { return 0, memlimit.ErrNoLimit }
	broken := func() (uint64, error) { return 0, errors.New("no cgroup here") }
	for _, tc := range []struct {
		name     string
		ratio    float64
		env      map[string]string
		provider memlimit.Provider
		want     int64 // the runtime's soft limit afterwards
		wantErr  bool
	}{
		{name: "a share of the container's limit", ratio: 0.9, provider: limited, want: 966367641}, // ⌊0.9 GiB⌋
		{name: "the whole limit", ratio: 1, provider: limited, want: gib},
		{name: "no container limit: none", ratio: 0.9, provider: unlimited, want: math.MaxInt64},
		{name: "off", ratio: 0, provider: limited, want: math.MaxInt64},
		{name: "GOMEMLIMIT in the environment wins", ratio: 0.9, env: map[string]string{"GOMEMLIMIT": "100MiB"}, provider: limited, want: math.MaxInt64},
		{name: "AUTOMEMLIMIT=off wins", ratio: 0.9, env: map[string]string{"AUTOMEMLIMIT": "off"}, provider: limited, want: math.MaxInt64},
		{name: "an unreadable limit is an error, and none is set", ratio: 0.9, provider: broken, want: math.MaxInt64, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			previous := debug.SetMemoryLimit(math.MaxInt64)
			t.Cleanup(func() { debug.SetMemoryLimit(previous) })
			for _, k := range []string{"GOMEMLIMIT", "AUTOMEMLIMIT"} {
				t.Setenv(k, "") // restored afterwards
				if v, ok := tc.env[k]; ok {
					t.Setenv(k, v)
				} else {
					_ = os.Unsetenv(k)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			m := memoryLimit{ratio: tc.ratio}
			if err := m.validate(); err != nil {
				t.Fatal(err)
			}
			got, err := m.apply(ctx, tc.provider, logr.Discard())
			if (err != nil) != tc.wantErr {
				t.Fatalf("apply: %v, want error %v", err, tc.wantErr)
			}
			if now := debug.SetMemoryLimit(-1); now != tc.want || (!tc.wantErr && got != tc.want) {
				t.Errorf("soft limit %d (apply said %d), want %d", now, got, tc.want)
			}
		})
	}
}

func TestMemoryLimitRatioOutOfRangeIsRefused(t *testing.T) {
	for _, r := range []float64{-0.1, 1.5, math.NaN()} {
		if err := (memoryLimit{ratio: r}).validate(); err == nil {
			t.Errorf("ratio %g accepted", r)
		}
	}
}
