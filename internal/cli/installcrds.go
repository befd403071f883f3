package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ExitUnreachable: install-crds found no API server answering at the
// kubeconfig's address, or no kubeconfig to read (make run then starts
// the local cluster).
const ExitUnreachable = 4

// installCRDsCommand is "chartkeeper install-crds [--kubeconfig F] [dir]":
// it checks that the cluster answers (/readyz), applies every CRD in dir
// (default config/crd/bases; server-side, field manager chartkeeper) and
// waits until they are Established. make run uses it instead of kubectl,
// so that it builds nothing but the operator.
func installCRDsCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("install-crds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the cluster to answer (at most 5s) and the CRDs to be Established")
	if err := fs.Parse(args); err != nil {
		return ExitConfig
	}
	dir := "config/crd/bases"
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "chartkeeper install-crds: one directory at most, got %q\n", fs.Args())
		return ExitConfig
	} else if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	crds, err := readCRDs(dir)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper install-crds: %v\n", err)
		return ExitConfig
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper install-crds: no cluster to ask: %v\n", err)
		return ExitUnreachable
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := ping(ctx, loader, min(*timeout, 5*time.Second)); err != nil {
		fmt.Fprintf(stderr, "chartkeeper install-crds: the cluster at %s does not answer: %v\n", cfg.Host, err)
		return ExitUnreachable
	}
	raw, _ := loader.RawConfig()
	fmt.Fprintf(stdout, "cluster %s (context %s) answers\n", cfg.Host, raw.CurrentContext)
	scheme := runtime.NewScheme()
	if err := apiextv1.AddToScheme(scheme); err != nil {
		fmt.Fprintf(stderr, "chartkeeper install-crds: %v\n", err)
		return ExitFailure
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err == nil {
		err = applyCRDs(ctx, c, crds)
	}
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper install-crds: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(stdout, "CRDs from %s installed: %d Established\n", dir, len(crds))
	return ExitOK
}

// ping asks the API server's /readyz, waiting at most within.
func ping(ctx context.Context, loader clientcmd.ClientConfig, within time.Duration) error {
	cfg, err := loader.ClientConfig()
	if err != nil {
		return err
	}
	cfg.Timeout = within
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = d.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// readCRDs reads every CustomResourceDefinition in the YAML files of dir.
func readCRDs(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if u.GetKind() != "CustomResourceDefinition" {
			continue // the kustomization, say
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinition in %s", dir)
	}
	return out, nil
}

// applyCRDs applies the CRDs (server-side) and waits until each is Established.
func applyCRDs(ctx context.Context, c client.Client, crds []*unstructured.Unstructured) error {
	for _, u := range crds {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("chartkeeper"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying CRD %s: %w", u.GetName(), err)
		}
	}
	var waiting []string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		waiting = waiting[:0]
		for _, u := range crds {
			got := &apiextv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, got); err != nil {
				return false, err
			}
			if !established(got) {
				waiting = append(waiting, got.Name)
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil && len(waiting) > 0 {
		return errors.New("not Established in time: " + strings.Join(waiting, ", "))
	}
	return err
}

func established(crd *apiextv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
			return true
		}
	}
	return false
}
