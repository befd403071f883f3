package operator

import (
	"context"
	"fmt"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/controller"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/recorder"
	"github.com/chartkeeper/chartkeeper/internal/release"
)

// setupControllers builds the shared release engine and one controller per watch.
func (op *Operator) setupControllers(cfg *rest.Config, o options) error {
	// Every write Helm makes is attributed to chartkeeper in managedFields.
	helm.SetFieldManager(api.FieldManager)
	hlog := op.log.WithName("helm").V(1)
	hc, err := helm.New(cfg, func(format string, v ...any) { hlog.Info(fmt.Sprintf(format, v...)) })
	if err != nil {
		return fmt.Errorf("creating Helm client: %w", err)
	}
	var whole []schema.GroupKind
	for _, w := range op.watches {
		whole = append(whole, w.Policy.Health.Kinds()...)
	}
	deps, err := controller.NewDependents(op.mgr, o.namespaces, whole)
	if err != nil {
		return fmt.Errorf("creating the dependents cache: %w", err)
	}
	releaseSecrets, err := controller.NewReleaseSecrets(op.mgr, o.namespaces)
	if err != nil {
		return err
	}
	hc.ReadReleasesFrom(releaseSecrets, helm.EveryReleaseSecret)
	live, err := client.New(cfg, client.Options{Scheme: op.mgr.GetScheme(), Mapper: op.mgr.GetRESTMapper(), HTTPClient: op.mgr.GetHTTPClient()})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, op.mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	var signed []release.Option
	if o.signingKey.Name != "" {
		key, err := loadSigningKey(cs, o.signingKey)
		if err != nil {
			return err
		}
		if err := hc.SignWith(key); err != nil {
			return err
		}
		signed = append(signed, release.WithSignedReleases())
	}
	sources, err := controller.NewValuesSources(op.mgr, cs, op.log.WithName("valuesfrom"))
	if err != nil {
		return fmt.Errorf("creating the valuesFrom watches: %w", err)
	}
	events := recorder.New(op.mgr.GetScheme(), "chartkeeper", func(ctx context.Context, ev *eventsv1.Event) error {
		return live.Create(ctx, ev)
	}, metrics.EventDropped, op.log.WithName("events"))
	if err := op.mgr.Add(events); err != nil {
		return err
	}
	engine, err := release.NewEngine(hc, deps, live, append([]release.Option{
		release.WithLogger(op.log.WithName("release")),
		release.WithRecorder(events),
		release.WithWatchKind(deps.WatchKind),
		release.WithStatusCache(deps),
		release.WithHooks(o.hooks),
		release.WithValuesSources(sources),
		// Releases of watches with impersonate write as their account:
		// a client of its own (impersonation wraps the transport).
		release.WithImpersonation(func(user string) (client.Client, error) {
			return client.New(helm.Impersonating(cfg, user), client.Options{Scheme: op.mgr.GetScheme(), Mapper: op.mgr.GetRESTMapper()})
		}),
	}, signed...)...,
	)
	if err != nil {
		return err
	}
	metrics.TrackStores(engine.Tracked)
	for _, w := range op.watches {
		if err := controller.Setup(op.mgr, deps, sources, engine, release.NewTarget(w), op.log); err != nil {
			return fmt.Errorf("setting up %s: %w", w, err)
		}
	}
	return nil
}
