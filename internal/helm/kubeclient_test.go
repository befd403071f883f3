package helm

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
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

func TestNoValidatorDownloadWhenTheServerValidatesFields(t *testing.T) {
	v := newValidators()
	modern := true
	v.serverValidates = func() bool { return modern }
	f := &countingFactory{}
	s, err := sharedValidatorFactory{Factory: f, shared: v}.Validator("Strict")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(validation.NullSchema); !ok || f.built != 0 {
		t.Fatalf("got %T after %d builds, want Helm's validator skipped", s, f.built)
	}
	modern = false
	if _, err := (sharedValidatorFactory{Factory: f, shared: v}).Validator("Strict"); err != nil || f.built != 1 {
		t.Fatalf("an older server: %d builds, err %v", f.built, err)
	}
}

func TestValidatesFields(t *testing.T) {
	cases := []struct {
		major, minor string
		want         bool
	}{
		{"1", "36", true}, {"1", "27", true}, {"1", "26", false}, {"1", "30+", true}, {"2", "0", true}, {"", "", false},
	}
	for _, c := range cases {
		if got := validatesFields(chartutil.KubeVersion{Major: c.major, Minor: c.minor}); got != c.want {
			t.Errorf("%s.%s: %v, want %v", c.major, c.minor, got, c.want)
		}
	}
}
