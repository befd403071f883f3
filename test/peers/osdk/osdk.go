// Package osdk reproduces what operator-sdk's Helm operator (v1.42,
// cmd/helm-operator; its reconciler is internal/helm/controller and
// internal/helm/release of github.com/operator-framework/operator-sdk)
// leaves in a cluster when it installs and upgrades a custom resource's
// release, so that the end-to-end tests can take such releases over.
//
// The operator itself cannot be built here: the Go module proxy answers
// github.com/operator-framework/operator-sdk@v1.42.0's go.mod with
// "403 Forbidden: This module version is not available" (and every other
// version the same), so the go command cannot resolve the module. Its
// layout is small and reproduced exactly, with Helm's own actions:
//
//   - the release is named after the resource, in its namespace, with the
//     resource's spec as values;
//   - revisions are stored by Helm's Secret driver (Secrets
//     sh.helm.release.v1.<name>.v<N>, type helm.sh/release.v1, labels
//     owner=helm, name, status, version), each created or updated with a
//     controller reference to the resource;
//   - released objects get a controller reference to the resource where
//     Kubernetes allows it, operator-lib's owner annotations elsewhere;
//   - the resource gets the finalizer
//     helm.sdk.operatorframework.io/uninstall-release once installed;
//   - its status holds the conditions Initialized and Deployed
//     (InstallSuccessful, UpgradeSuccessful) and deployedRelease.
//
// A reconcile installs when no revision is deployed, upgrades when the
// deployed manifest differs from the chart rendered with the spec (a
// dry-run upgrade), and first deletes revisions that are not deployed, as
// operator-sdk's Sync does. Deletion is not reproduced: the tests give
// deletion to chartkeeper.
package osdk

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Finalizer is the finalizer operator-sdk's Helm operator puts on each
// resource it installed; FinalizerLegacy is the one it still honours from
// before v1.x.
const (
	Finalizer       = "helm.sdk.operatorframework.io/uninstall-release"
	FinalizerLegacy = "uninstall-helm-release"
)

// Action is what a reconcile did to the release.
type Action string

// What a reconcile did.
const (
	Installed Action = "Installed"
	Upgraded  Action = "Upgraded"
	Unchanged Action = "Unchanged"
)

// Operator is operator-sdk's Helm operator for one kind and chart.
type Operator struct {
	kubeconfig string
	gvk        schema.GroupVersionKind
	chart      *chart.Chart
	client     client.Client
	clientset  kubernetes.Interface
}

// New loads the chart and connects with a kubeconfig file.
func New(kubeconfig string, gvk schema.GroupVersionKind, chartDir string) (*Operator, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Operator{kubeconfig: kubeconfig, gvk: gvk, chart: chrt, client: cl, clientset: cs}, nil
}

// Reconcile reconciles the resource ns/name once, as operator-sdk's
// reconciler does for a resource not being deleted, and says what it did
// to the release.
func (o *Operator) Reconcile(ctx context.Context, ns, name string) (Action, error) {
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(o.gvk)
	if err := o.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cr); err != nil {
		return "", err
	}
	cfg := o.actionConfig(cr)
	values, _ := cr.Object["spec"].(map[string]any)
	if values == nil {
		values = map[string]any{}
	}
	status := StatusOf(cr)
	now := metav1.Now()
	status.set(Condition{Type: ConditionInitialized, Status: "True"}, now)

	deployed, err := sync(cfg, name)
	if err != nil {
		return "", err
	}
	act := Unchanged
	var rel *release.Release
	switch {
	case deployed == nil:
		install := action.NewInstall(cfg)
		install.ReleaseName, install.Namespace = name, ns
		if rel, err = install.Run(o.chart, values); err != nil {
			return "", fmt.Errorf("install: %w", err)
		}
		act = Installed
	default:
		dry := action.NewUpgrade(cfg)
		dry.Namespace, dry.DryRun = ns, true
		candidate, err := dry.Run(name, o.chart, values)
		if err != nil {
			return "", fmt.Errorf("dry-run upgrade: %w", err)
		}
		rel = deployed
		if candidate.Manifest != deployed.Manifest {
			upgrade := action.NewUpgrade(cfg)
			upgrade.Namespace = ns
			if rel, err = upgrade.Run(name, o.chart, values); err != nil {
				return "", fmt.Errorf("upgrade: %w", err)
			}
			act = Upgraded
		}
	}
	status.remove(ConditionReleaseFailed)
	status.remove(ConditionIrreconcilable)

	if !controllerutil.ContainsFinalizer(cr, Finalizer) && !controllerutil.ContainsFinalizer(cr, FinalizerLegacy) {
		controllerutil.AddFinalizer(cr, Finalizer)
		if err := o.client.Update(ctx, cr); err != nil {
			return "", fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	reason := ReasonUpgradeSuccessful
	if rel.Version == 1 {
		reason = ReasonInstallSuccessful
	}
	notes := ""
	if rel.Info != nil {
		notes = rel.Info.Notes
	}
	status.set(Condition{Type: ConditionDeployed, Status: "True", Reason: reason, Message: notes}, now)
	status.DeployedRelease = &DeployedRelease{Name: rel.Name, Manifest: rel.Manifest}
	st, err := toMap(status)
	if err != nil {
		return "", err
	}
	cr.Object["status"] = st
	if err := o.client.Status().Update(ctx, cr); err != nil {
		return "", fmt.Errorf("updating the status: %w", err)
	}
	return act, nil
}

// sync deletes the revisions that are not deployed and returns the
// deployed one (nil if none), as operator-sdk's manager.Sync does.
func sync(cfg *action.Configuration, name string) (*release.Release, error) {
	history, err := cfg.Releases.History(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("release history: %w", err)
	}
	for _, r := range history {
		if r.Info != nil && r.Info.Status != release.StatusDeployed {
			if _, err := cfg.Releases.Delete(r.Name, r.Version); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
				return nil, fmt.Errorf("deleting a stale revision: %w", err)
			}
		}
	}
	rel, err := cfg.Releases.Deployed(name)
	if err != nil {
		return nil, nil // none deployed: operator-sdk installs
	}
	return rel, nil
}

// actionConfig is operator-sdk's action configuration for a resource
// (internal/helm/client/actionconfig.go).
func (o *Operator) actionConfig(cr *unstructured.Unstructured) *action.Configuration {
	ns := cr.GetNamespace()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &o.kubeconfig, &ns
	kc := kube.New(flags)
	kc.Namespace = ns
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(cr, cr.GetObjectKind().GroupVersionKind())}
	d := driver.NewSecrets(&ownerRefSecrets{SecretInterface: o.clientset.CoreV1().Secrets(ns), refs: owner})
	return &action.Configuration{
		RESTClientGetter: flags,
		Releases:         storage.Init(d),
		KubeClient:       &ownerRefKube{Client: kc, owner: cr},
		Log:              func(string, ...any) {},
	}
}
