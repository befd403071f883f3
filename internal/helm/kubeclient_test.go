package helm

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/kubectl/pkg/validation"
)

// countingFactory counts the validators it builds.
type countingFactory struct {
	kube.Factory
	built int
}

func (f *countingFactory) Validator(string) (validation.Schema, error) {
	f.built++
	return validation.NullSchema{}, nil
}

func TestValidatorsAreSharedUntilTheTTL(t *testing.T) {
	now := time.Unix(0, 0)
	v := newValidators()
	v.now = func() time.Time { return now }
	f := &countingFactory{}
	a := sharedValidatorFactory{Factory: f, shared: v}
	b := sharedValidatorFactory{Factory: f, shared: v} // another namespace's client
	steps := []struct {
		advance   time.Duration
		factory   sharedValidatorFactory
		directive string
		built     int
	}{
		{0, a, "Strict", 1},
		{time.Second, b, "Strict", 1},
		{0, a, "Ignore", 2},
		{ValidatorTTL, b, "Strict", 3},
		{0, a, "Strict", 3},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if _, err := s.factory.Validator(s.directive); err != nil {
			t.Fatal(err)
		}
		if f.built != s.built {
			t.Fatalf("step %d: %d validators built, want %d", i, f.built, s.built)
		}
	}
}
