package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// testFinalizer: the running controller adds chartkeeper's finalizer to a
// new resource (unless a predecessor's serves) and, once the resource is deleted, removes it only after the
// release is uninstalled; other finalizers are kept throughout.
func (e *env) testFinalizer(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{})
	f.setup(t)
	f.start(t)

	tests := []struct {
		name   string
		others []string // finalizers of other controllers
		left   []string // those left once the release is uninstalled (nil: none, the resource goes)
	}{
		{name: "only chartkeeper's", others: nil},
		{name: "with another controller's", others: []string{"example.com/keep"}, left: []string{"example.com/keep"}},
		{name: "with two others", others: []string{"example.com/keep", "example.com/backup"}, left: []string{"example.com/keep", "example.com/backup"}},
		// A predecessor's finalizer goes once the release is uninstalled
		// (a release taken over); no other does.
		{name: "with helm-operator-plugins'", others: []string{api.FinalizerHelmOperatorPlugins}},
		{name: "with operator-sdk's and another's", others: []string{api.FinalizerOperatorSDK, "example.com/keep"}, left: []string{"example.com/keep"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("fin-%d", i)
			f.create(t, f.note(name, nil, tc.others...))

			testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
				if err := f.ready(ctx, name); err != nil {
					return err
				}
				// A predecessor's finalizer serves as chartkeeper's: none is added beside it.
				want := slices.Clone(tc.others)
				if !slices.ContainsFunc(tc.others, func(s string) bool { return slices.Contains(api.PredecessorFinalizers(), s) }) {
					want = append([]string{api.Finalizer}, tc.others...)
				}
				return f.hasFinalizers(ctx, name, want)
			})
			if ok, err := f.released(context.Background(), name); !ok || err != nil {
				t.Fatalf("released ConfigMap exists = %v (%v), want true", ok, err)
			}

			if err := e.cl.Delete(context.Background(), f.mustGet(t, name)); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
				if len(tc.left) == 0 {
					// chartkeeper's finalizer (and a predecessor's) were the last: the resource goes.
					if _, err := f.get(ctx, name); !apierrors.IsNotFound(err) {
						return fmt.Errorf("%s still there (%v)", name, err)
					}
				} else if err := f.hasFinalizers(ctx, name, tc.left); err != nil {
					return err
				}
				// The finalizer went only after the release did.
				if n, err := f.releaseSecrets(ctx, name); err != nil || n != 0 {
					return fmt.Errorf("finalizer removed while %d release revisions remain (%v)", n, err)
				}
				if ok, err := f.released(ctx, name); ok || err != nil {
					return fmt.Errorf("finalizer removed while the released ConfigMap remains (%v)", err)
				}
				return nil
			})
		})
	}
}

// hasFinalizers returns nil when the resource's finalizers are exactly want
// (in any order).
func (f *fixture) hasFinalizers(ctx context.Context, name string, want []string) error {
	u, err := f.get(ctx, name)
	if err != nil {
		return err
	}
	got := slices.Clone(u.GetFinalizers())
	want = slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("finalizers %v, want %v", got, want)
	}
	return nil
}
