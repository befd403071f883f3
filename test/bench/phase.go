package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// milestoneCheck is a state each release must reach in a phase.
type milestoneCheck struct {
	name    string
	reached func(key) bool
}

// phaseRun is one timed phase: act changes the custom resources (and, for
// the floor, writes what an operator would), while the phase watches every
// release reach every milestone.
type phaseRun struct {
	name       string
	keys       []key
	act        func(ctx context.Context) error
	milestones []milestoneCheck
	timeout    time.Duration
	// alive reports an error once the subject can no longer make progress
	// (its process exited). Optional.
	alive func() error
	log   io.Writer
	label string
}

// errPhaseTimeout ends a phase whose releases did not all get there in time.
var errPhaseTimeout = errors.New("phase timed out")

// run times the phase. The returned Phase is filled as far as it got, also
// with an error.
func (p phaseRun) run(ctx context.Context) (Phase, error) {
	out := Phase{Name: p.name}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	actDone := make(chan error, 1)
	go func() { actDone <- p.act(ctx) }()
	acting := true

	times := make([][]float64, len(p.milestones))
	reached := make([]map[key]bool, len(p.milestones))
	for i := range reached {
		reached[i] = map[key]bool{}
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	lastLog := start
	finish := func(err error) (Phase, error) {
		out.Seconds = time.Since(start).Seconds()
		for i, m := range p.milestones {
			ms := Milestone{Name: m.name, Reached: len(times[i]), Times: times[i]}
			if len(times[i]) == len(p.keys) && len(p.keys) > 0 {
				last := times[i][len(times[i])-1]
				ms.Seconds = &last
			}
			out.Milestones = append(out.Milestones, ms)
		}
		out.Complete = err == nil
		if acting {
			cancel()
			<-actDone
		}
		return out, err
	}
	for {
		now := time.Since(start).Seconds()
		complete := true
		for i, m := range p.milestones {
			for _, k := range p.keys {
				if !reached[i][k] && m.reached(k) {
					reached[i][k] = true
					times[i] = append(times[i], now)
				}
			}
			complete = complete && len(times[i]) == len(p.keys)
		}
		if time.Since(lastLog) >= 5*time.Second {
			lastLog = time.Now()
			fmt.Fprintf(p.log, "  %-12s %-8s %6.1fs %s\n", p.label, p.name, now, p.progress(times))
		}
		if complete && !acting {
			fmt.Fprintf(p.log, "  %-12s %-8s %6.1fs %s, done\n", p.label, p.name, now, p.progress(times))
			return finish(nil)
		}
		if p.alive != nil {
			if err := p.alive(); err != nil {
				return finish(err)
			}
		}
		select {
		case err := <-actDone:
			acting = false
			if err != nil {
				return finish(fmt.Errorf("%s: %w", p.name, err))
			}
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return finish(fmt.Errorf("%s after %s: %s: %w", p.name, p.timeout, p.progress(times), errPhaseTimeout))
			}
			return finish(ctx.Err())
		case <-tick.C:
		}
	}
}

func (p phaseRun) progress(times [][]float64) string {
	if len(p.milestones) == 0 {
		return "nothing to do"
	}
	s := ""
	for i, m := range p.milestones {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d/%d %s", len(times[i]), len(p.keys), m.name)
	}
	return s
}
