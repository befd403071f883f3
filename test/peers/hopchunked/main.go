// Command hopchunked is a helm-operator-plugins v0.9.1 operator as a
// library user builds one (StackRox, OLM's operator-controller): the
// `helm-operator run` of v0.9.1 (its reconciler, watches.yaml loader,
// annotations and WATCH_NAMESPACE handling) with one change, the release
// storage, which is helm-operator-plugins' chunked Secrets driver
// (pkg/storage) instead of Helm's Secret driver. The binary of v0.9.1
// (make peers: bin/helm-operator) can only store plain Secrets; this is the
// peer the end-to-end tests take chunked releases over from.
//
// As those users wire it, the driver's Secrets are reached through
// helm-operator-plugins' owner-reference client, which puts a controller
// reference to the custom resource on each revision's index Secret (the
// chunks, whose index names them, carry none), and the driver is given
// Helm's owner label value "helm".
//
//	hopchunked --watches-file watches.yaml --health-probe-bind-address 127.0.0.1:8081 \
//	  [--kubeconfig FILE] [--chunk-size BYTES] [--metrics-bind-address 0]
//
// WATCH_NAMESPACE confines it to namespaces, as it does helm-operator.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/operator-framework/helm-operator-plugins/pkg/annotation"
	hopclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	hopmanager "github.com/operator-framework/helm-operator-plugins/pkg/manager"
	"github.com/operator-framework/helm-operator-plugins/pkg/reconciler"
	hopstorage "github.com/operator-framework/helm-operator-plugins/pkg/storage"
	"github.com/operator-framework/helm-operator-plugins/pkg/watches"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// storageOwner is the owner label the chunked driver writes and selects
// by: Helm's own, as chartkeeper's chunked driver reads it.
const storageOwner = "helm"

func main() {
	var (
		watchesFile = flag.String("watches-file", "./watches.yaml", "Path to the watches file to use")
		probeAddr   = flag.String("health-probe-bind-address", ":8081", "The address the probe endpoint binds to")
		metricsAddr = flag.String("metrics-bind-address", "0", "The address the metric endpoint binds to (0: off)")
		chunkSize   = flag.Int("chunk-size", 1<<20, "The chunked driver's chunk size in bytes")
		maxChunks   = flag.Int("max-chunks", 64, "The chunked driver's most chunks a revision may be read or written in")
	)
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse() // --kubeconfig is controller-runtime's (ctrl.GetConfig)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if err := run(*watchesFile, *probeAddr, *metricsAddr, *chunkSize, *maxChunks); err != nil {
		fmt.Fprintln(os.Stderr, "hopchunked:", err)
		os.Exit(1)
	}
}

func run(watchesFile, probeAddr, metricsAddr string, chunkSize, maxChunks int) error {
	log := ctrl.Log.WithName("cmd")
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	options := manager.Options{
		HealthProbeBindAddress: probeAddr,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
	}
	hopmanager.ConfigureWatchNamespaces(&options, log)
	mgr, err := manager.New(cfg, options)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}

	acg, err := hopclient.NewActionConfigGetter(mgr.GetConfig(), mgr.GetRESTMapper(),
		hopclient.StorageDriverMapper(chunkedStorage(hopstorage.ChunkedSecretsConfig{
			ChunkSize: chunkSize, MaxReadChunks: maxChunks, MaxWriteChunks: maxChunks,
		})))
	if err != nil {
		return fmt.Errorf("creating the action config getter: %w", err)
	}
	ws, err := watches.Load(watchesFile)
	if err != nil {
		return fmt.Errorf("loading %s: %w", watchesFile, err)
	}
	for _, w := range ws {
		// Each watch gets an action client getter of its own, as
		// helm-operator's reconcilers each build theirs.
		aclient, err := hopclient.NewActionClientGetter(acg)
		if err != nil {
			return fmt.Errorf("creating the action client getter: %w", err)
		}
		r, err := reconciler.New(
			reconciler.WithChart(*w.Chart),
			reconciler.WithGroupVersionKind(w.GroupVersionKind),
			reconciler.WithOverrideValues(w.OverrideValues),
			reconciler.WithSelector(*w.Selector),
			reconciler.SkipDependentWatches(*w.WatchDependentResources),
			reconciler.WithActionClientGetter(aclient),
			reconciler.WithInstallAnnotations(annotation.DefaultInstallAnnotations...),
			reconciler.WithUpgradeAnnotations(annotation.DefaultUpgradeAnnotations...),
			reconciler.WithUninstallAnnotations(annotation.DefaultUninstallAnnotations...),
		)
		if err != nil {
			return fmt.Errorf("the reconciler of %s: %w", w.GroupVersionKind, err)
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("the controller of %s: %w", w.GroupVersionKind, err)
		}
		log.Info("configured watch", "gvk", w.GroupVersionKind, "chartDir", w.ChartPath, "storage", "chunked", "chunkSize", chunkSize)
	}
	log.Info("starting manager")
	return mgr.Start(ctrl.SetupSignalHandler())
}

// chunkedStorage maps a custom resource to helm-operator-plugins' chunked
// driver over its namespace's Secrets, its index Secrets owned by it.
func chunkedStorage(config hopstorage.ChunkedSecretsConfig) hopclient.ObjectToStorageDriverMapper {
	return func(ctx context.Context, obj client.Object, restConfig *rest.Config) (driver.Driver, error) {
		core, err := clientcorev1.NewForConfig(restConfig)
		if err != nil {
			return nil, err
		}
		log := ctrl.LoggerFrom(ctx).V(1)
		config.Log = func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) }
		owner := []metav1.OwnerReference{*metav1.NewControllerRef(obj, obj.GetObjectKind().GroupVersionKind())}
		secrets := hopclient.NewOwnerRefSecretClient(core.Secrets(obj.GetNamespace()), owner, func(s *corev1.Secret) bool {
			return s.Type == hopstorage.SecretTypeChunkedIndex
		})
		return hopstorage.NewChunkedSecrets(secrets, storageOwner, config), nil
	}
}
