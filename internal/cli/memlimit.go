package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

// memoryLimitRefresh is how often the container's memory limit is read
// again, so that a resized container (in-place Pod resize) moves the
// soft limit with it.
const memoryLimitRefresh = time.Minute

// memoryLimit sets the Go runtime's soft memory limit (GOMEMLIMIT) to a
// share of the container's memory limit, read from its cgroup.
//
// Without it the garbage collector lets the heap grow to twice what is
// live before it collects (GOGC=100) whatever the container's limit, so a
// burst of work (a thousand releases installed at once) can take an
// operator whose live heap fits its limit past it, and the kernel kills
// it. With it the collector works harder as the heap nears the limit.
// GOMEMLIMIT set in the environment wins, as the Go runtime reads it
// itself; so does AUTOMEMLIMIT (a ratio, or "off").
type memoryLimit struct {
	ratio float64
}

func (m *memoryLimit) bind(fs *flag.FlagSet) {
	fs.Float64Var(&m.ratio, "memory-limit-ratio", 0.9,
		"share of the container's memory limit (its cgroup) the Go runtime keeps its memory under (GOMEMLIMIT); 0 leaves the runtime's default. GOMEMLIMIT in the environment wins")
}

func (m memoryLimit) validate() error {
	if math.IsNaN(m.ratio) || m.ratio < 0 || m.ratio > 1 {
		return fmt.Errorf("--memory-limit-ratio must be between 0 (off) and 1, got %g", m.ratio)
	}
	return nil
}

// apply sets the soft limit from what provider reports (memlimit.FromCgroup
// in a run), read again every memoryLimitRefresh while ctx lasts. It
// returns the limit in force (math.MaxInt64: none).
func (m memoryLimit) apply(ctx context.Context, provider memlimit.Provider, log logr.Logger) (int64, error) {
	if m.ratio == 0 {
		return debug.SetMemoryLimit(-1), nil // the runtime's own: GOMEMLIMIT, or none
	}
	return memlimit.Set(
		memlimit.WithRatio(m.ratio),
		memlimit.WithProvider(provider),
		memlimit.WithLogger(slog.New(logr.ToSlogHandler(log))),
		memlimit.WithRefreshInterval(ctx, memoryLimitRefresh),
	)
}
