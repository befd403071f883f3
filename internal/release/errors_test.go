package release

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// Errors before Helm stored anything: what a change outside the chart can
// heal is retried with backoff under a reason that says what is missing;
// what the chart and values cause stays terminal.
func TestDependencyReason(t *testing.T) {
	nsMissing := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "team")
	noKind := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "db.example.com", Kind: "Cluster"}, SearchedVersions: []string{"v1"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New(`User "system:serviceaccount:op:ck" cannot list resource "secrets"`))
	tests := []struct {
		name string
		err  error
		want api.Reason
	}{
		{"release namespace missing (Helm's storage, wrapped)", fmt.Errorf("create: failed to create: %w", nsMissing), api.ReasonMissingDependency},
		{"release namespace missing, flattened to text", errors.New(`create: failed to create: namespaces "team" not found`), api.ReasonMissingDependency},
		{"CRD missing (typed)", fmt.Errorf("unable to build kubernetes objects from release manifest: %w", noKind), api.ReasonMissingDependency},
		{"CRD missing, flattened to text", errors.New(`unable to build kubernetes objects from release manifest: resource mapping not found for name: "db" namespace: "" from "": no matches for kind "Cluster" in version "db.example.com/v1"
ensure CRDs are installed first`), api.ReasonMissingDependency},
		{"Forbidden on Helm's own reads (typed)", fmt.Errorf("query: failed to query with labels: %w", forbidden), api.ReasonForbidden},
		{"Forbidden, flattened to text", errors.New(`list: failed to list: secrets is forbidden: User "system:serviceaccount:op:ck" cannot list resource "secrets" in API group "" in the namespace "team"`), api.ReasonForbidden},
		{"schema rejection stays terminal", &ChartError{Err: errors.New("values rejected by chart app: replicas: must be >= 0")}, ""},
		{"a chart error wrapping a NotFound stays terminal", &ChartError{Err: nsMissing}, ""},
		{"template failure stays terminal", errors.New(`execution error at (app/templates/fail.yaml:2:30): boom`), ""},
		{"bad rendered YAML stays terminal", errors.New("YAML parse error on app/templates/app.yaml: error converting YAML to JSON: yaml: line 3: mapping values are not allowed in this context"), ""},
		{"scope refusal stays terminal", fmt.Errorf("error while running post render on files: %w", &ScopeError{Object: ownership.Placement{ClusterScoped: true}}), ""},
		{"no error", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dependencyReason(tt.err); got != tt.want {
				t.Errorf("dependencyReason(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
