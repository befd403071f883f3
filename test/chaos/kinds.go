package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// chaosKind is one kind of the chaos workload. Every kind releases the same
// chart (Config.Chart), so the checks of the released objects are the same;
// what differs is what the watch adds to the values.
type chaosKind struct {
	gvk schema.GroupVersionKind
	// prefix starts the names of its custom resources (release names are
	// the resource names, so the kinds of one namespace must not share one).
	prefix string
	// kept: the watch turns on the chart's keptConfig, a ConfigMap
	// "<release>-kept" annotated helm.sh/resource-policy: keep, which must
	// outlive every upgrade, rollback and uninstall.
	kept bool
	// hooked: the watch turns on the chart's hook, a ConfigMap
	// "<release>-prepare" made by a pre-install/-upgrade/-rollback hook:
	// every action of this kind runs a chart hook.
	hooked bool
}

func (k *chaosKind) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.gvk.Group, Version: k.gvk.Version, Resource: manifests.Plural(k.gvk.Kind)}
}

const chaosGroup = "chaos.chartkeeper.dev"

// chaosKinds are the kinds, in the order Config.Kinds takes them.
var chaosKinds = []*chaosKind{
	{gvk: schema.GroupVersionKind{Group: chaosGroup, Version: "v1", Kind: "Chaos"}, prefix: "c"},
	{gvk: schema.GroupVersionKind{Group: chaosGroup, Version: "v1", Kind: "ChaosKept"}, prefix: "k", kept: true},
	{gvk: schema.GroupVersionKind{Group: chaosGroup, Version: "v1", Kind: "ChaosHooked"}, prefix: "h", hooked: true},
}

// The suffixes of the chart's objects that are not the spec's: the kept
// ConfigMap and the hook's ConfigMap.
const (
	keptSuffix = "-kept"
	hookSuffix = "-prepare"
)

// writeWatches writes the operator's watches.yaml: one entry per kind, with
// a short remediation backoff, so that failures are retried within the
// run, a short action timeout, so that a revision a killed operator left
// pending is taken as abandoned (and unlocked) within the run too, drift
// correction on (the default, said here) and maxHistory.
func writeWatches(dir, chart string, kinds []*chaosKind) (string, error) {
	path := filepath.Join(dir, "watches.yaml")
	var b strings.Builder
	b.WriteString("# The chaos harness's watches.yaml (test/chaos).\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, `- group: %s
  version: %s
  kind: %s
  chart: %s
  maxConcurrentReconciles: 4
  maxHistory: %d
  timeout: 20s
  remediation:
    retries: 3
    backoff: {initial: 1s, max: 4s}
  readiness:
    timeout: 1m
  drift:
    mode: correct
`, k.gvk.Group, k.gvk.Version, k.gvk.Kind, chart, maxHistory)
		switch {
		case k.kept:
			b.WriteString("  overrideValues:\n    keptConfig: \"true\"\n")
		case k.hooked:
			b.WriteString("  overrideValues:\n    hook: \"true\"\n")
		}
	}
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// setUp installs the CRD of every watched kind and creates the namespaces.
func setUp(ctx context.Context, admin *rest.Config, cs kubernetes.Interface, watchesPath string, namespaces []string) error {
	ws, err := watches.Load(watchesPath)
	if err != nil {
		return err
	}
	for _, w := range ws {
		crd, _, err := manifests.CRD(w, nil, manifests.CRDOptions{})
		if err != nil {
			return err
		}
		if err := kubeops.InstallCRD(ctx, admin, crd); err != nil {
			return err
		}
	}
	return kubeops.CreateNamespaces(ctx, cs, namespaces)
}
