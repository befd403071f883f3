package controller

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// TestTurns: rewordings past the budget book turns in order, keep the turn
// they booked when asked again, book none past the horizon, and a turn
// given back (the resource's state changed, its rewording became moot, it
// went) goes to the next.
func TestTurns(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1_000_000, 0))
	b := newStatusBook(clk)
	b.turns = rate.NewLimiter(rate.Every(time.Minute), 1)
	steps := []struct {
		name string
		do   func() time.Duration
		want time.Duration
	}{
		{"a: the budget's one turn", func() time.Duration { return b.turn("a") }, 0},
		{"b books the next", func() time.Duration { return b.turn("b") }, time.Minute},
		{"c's would be past the horizon: none booked", func() time.Duration { return b.turn("c") }, turnHorizon},
		{"b asked again keeps its turn", func() time.Duration { return b.turn("b") }, time.Minute},
		{"b's state changed: its turn goes back", func() time.Duration { b.wrote("b", api.Status{}, clk.Now(), "7"); return 0 }, 0},
		{"c asked again gets b's turn", func() time.Duration { return b.turn("c") }, time.Minute},
		{"c's rewording became moot", func() time.Duration { b.settled("c"); return 0 }, 0},
		{"d gets that turn", func() time.Duration { return b.turn("d") }, time.Minute},
		{"d went", func() time.Duration { b.forget("d"); return 0 }, 0},
		{"e gets it", func() time.Duration { return b.turn("e") }, time.Minute},
		{"a minute on, e's turn is now", func() time.Duration { clk.SetTime(clk.Now().Add(time.Minute)); return b.turn("e") }, 0},
		{"and spent: f books a minute on", func() time.Duration { return b.turn("f") }, time.Minute},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: waits %v, want %v", s.name, got, s.want)
		}
	}
	if got := b.entries[types.UID("d")]; got != nil {
		t.Errorf("the book still holds d after forget: %+v", got)
	}
}
