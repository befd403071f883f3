package watches

import (
	"fmt"
	"text/template"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Defaults applied by Load to fields a watch leaves unset.
const (
	DefaultMaxConcurrentReconciles = 1
	DefaultReconcilePeriod         = time.Duration(0) // 0: reconcile only on change
)

// Watch is one entry of watches.yaml after loading: the kind to watch, the
// chart that backs it, and how to reconcile it. Load fills every defaulted
// field, so consumers never see nil pointers.
type Watch struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// ChartPath is the chart directory or archive, as written in the file.
	ChartPath string `json:"chart"`
	// ShortNames are the kind's short names for kubectl (kubectl get wa).
	// Unset: Load derives one from the kind's capitals where it is free
	// (DerivedShortName); [] : none.
	ShortNames []string `json:"shortNames,omitempty"`

	// WatchDependentResources makes changes to released objects trigger a
	// reconcile of their custom resource. Default true.
	WatchDependentResources *bool `json:"watchDependentResources,omitempty"`
	// OverrideValues are set into the values after the CR's spec (dotted
	// keys, Helm --set syntax). Values are expanded from the environment
	// and then as Go templates with sprig functions, once, at load time.
	OverrideValues map[string]string `json:"overrideValues,omitempty"`
	// ReconcilePeriod forces a reconcile this often even without a change.
	ReconcilePeriod *metav1.Duration `json:"reconcilePeriod,omitempty"`
	// MaxConcurrentReconciles bounds parallel reconciles of this kind.
	MaxConcurrentReconciles *int `json:"maxConcurrentReconciles,omitempty"`
	// Selector restricts the watch to custom resources with these labels.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// PredecessorFields are operator-sdk's fields chartkeeper reads
	// (dryRunOption) and its string override values (predecessor.go).
	PredecessorFields

	// ReleaseName is a Go template for the release name, over NameData.
	// Default "{{ .Name }}" (the custom resource's name).
	ReleaseName string `json:"releaseName,omitempty"`
	// ReleaseNamespace is a Go template for the release namespace.
	// Default "{{ .Namespace }}" (the custom resource's namespace).
	ReleaseNamespace string `json:"releaseNamespace,omitempty"`
	// AllowReleaseNamespaceFromName lets ReleaseNamespace depend on the
	// resource's name ("{{ .Name }}"): whoever may create a resource then
	// picks the namespace of its release. Default false: such a template
	// is refused at load (see validateNamespaceFromName).
	AllowReleaseNamespaceFromName bool `json:"allowReleaseNamespaceFromName,omitempty"`
	// Timeout bounds every Helm action (install, upgrade, rollback,
	// uninstall), chart hooks included. Default 5m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// MaxHistory caps the revisions Helm keeps per release. Default 10; 0: unlimited.
	MaxHistory  *int         `json:"maxHistory,omitempty"`
	Remediation *Remediation `json:"remediation,omitempty"`
	Readiness   *Readiness   `json:"readiness,omitempty"`
	// Upgrade says whether upgrades wait for a person's approval of their
	// plan (see UpgradeConfig).
	Upgrade   *UpgradeConfig `json:"upgrade,omitempty"`
	Drift     *Drift         `json:"drift,omitempty"`
	Uninstall *Uninstall     `json:"uninstall,omitempty"`
	// Hooks turns on built-in Go hooks (credentials, TLS, status fields).
	Hooks *HookConfig `json:"hooks,omitempty"`
	// Images relocates released images to a mirror registry.
	Images *ImagesConfig `json:"images,omitempty"`
	// Scope allows released objects outside the release namespace. Default:
	// only the release namespace, nothing cluster-scoped.
	Scope *Scope `json:"scope,omitempty"`
	// Adopt lets a resource take over a release of its name that was made
	// outside chartkeeper (a person's helm install). Default false: such a
	// release is left alone and the resource is refused.
	Adopt bool `json:"adopt,omitempty"`
	// Storage is the release storage driver: StorageSecret (default) or
	// StorageChunked (see ReleaseStorage).
	Storage string `json:"storage,omitempty"`
	// CRDs says what chartkeeper does with the CRDs the chart ships (see
	// CRDPolicy); default: create the missing ones.
	CRDs *CRDs `json:"crds,omitempty"`
	// ValuesFrom lists ConfigMaps and Secrets each custom resource takes
	// values from, merged in order under its spec (see ValuesReference).
	ValuesFrom []ValuesReference `json:"valuesFrom,omitempty"`
	// Test runs the chart's tests after each install and upgrade, once
	// the release is ready, as a gate (see Test). Default: off.
	Test *Test `json:"test,omitempty"`
	// Impersonate runs the watch's releases as a ServiceAccount (see
	// Impersonate). Default: the operator's own rights.
	Impersonate *Impersonate `json:"impersonate,omitempty"`
	// Lookup says what the chart's lookup function may read: the release
	// namespace (LookupReleaseNamespace, the default) or the whole
	// cluster (LookupCluster; see LookupScope).
	Lookup Lookup `json:"lookup,omitempty"`
	// StatusCompat keeps a predecessor's status shape beside chartkeeper's
	// (statuscompat.go). Default: none, the predecessors' is removed.
	StatusCompat StatusCompat `json:"statusCompat,omitempty"`

	// Policy is the resolved release policy; set by Load.
	Policy Policy `json:"-"`
	// Chart is the loaded chart; set by Load.
	Chart *chart.Chart `json:"-"`
	// ResolvedChartPath is ChartPath made absolute; set by Load.
	ResolvedChartPath string `json:"-"`
	// LabelSelector is Selector compiled; set by Load (Everything when unset).
	LabelSelector labels.Selector `json:"-"`

	releaseName, releaseNamespace *template.Template
}

// GroupVersionKind returns the kind this watch reconciles.
func (w Watch) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: w.Group, Version: w.Version, Kind: w.Kind}
}

// String names the watch as its GVK, e.g. "apps.chartkeeper.dev/v1alpha1, Kind=WebApp".
func (w Watch) String() string {
	return w.GroupVersionKind().String()
}

// Period returns the forced reconcile period (0 for none).
func (w Watch) Period() time.Duration {
	if w.ReconcilePeriod == nil {
		return DefaultReconcilePeriod
	}
	return w.ReconcilePeriod.Duration
}

// Concurrency returns the maximum number of parallel reconciles.
func (w Watch) Concurrency() int {
	if w.MaxConcurrentReconciles == nil {
		return DefaultMaxConcurrentReconciles
	}
	return *w.MaxConcurrentReconciles
}

// WatchesDependents reports whether released objects are watched.
func (w Watch) WatchesDependents() bool {
	return w.WatchDependentResources == nil || *w.WatchDependentResources
}

// FieldError is one validation problem: which entry, which field, what is wrong.
type FieldError struct {
	// Index is the entry's position in the file, from 0.
	Index int
	// Kind is the entry's kind, if it has one, to make the message findable.
	Kind string
	// Field is the field name as written in YAML ("chart", "selector.matchLabels").
	Field string
	// Detail says what is wrong.
	Detail string
}

func (e *FieldError) Error() string {
	who := fmt.Sprintf("entry %d", e.Index)
	if e.Kind != "" {
		who = fmt.Sprintf("entry %d (kind %q)", e.Index, e.Kind)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", who, e.Detail)
	}
	return fmt.Sprintf("%s: field %q: %s", who, e.Field, e.Detail)
}
