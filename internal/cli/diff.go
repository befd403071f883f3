package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// ExitChanges is diff's exit code with --exit-code when a plan changes
// something.
const ExitChanges = 3

type diffFlags struct {
	file, watchesFile, kubeconfig string
	exitCode                      bool
}

// diffCommand prints the plan of the upgrade each custom resource of a
// file would make, as a unified diff per object, without an operator: the
// same plan (and digest) the operator writes to status.plan when upgrades
// need approval (docs/plan-approve.md).
func diffCommand(args []string, stdout, stderr io.Writer) int {
	var f diffFlags
	fs := apps.NewFlagSet("diff", stderr)
	fs.StringVar(&f.file, "f", "", "file of custom resources (YAML, several separated by ---; - for standard input)")
	fs.StringVar(&f.watchesFile, "watches-file", envOr("WATCHES_FILE", "watches.yaml"), "path of watches.yaml (env WATCHES_FILE)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster config, then ~/.kube/config)")
	fs.BoolVar(&f.exitCode, "exit-code", false, fmt.Sprintf("exit with %d when a plan changes something (0 when nothing would change)", ExitChanges))
	apps.BindFlags(fs)
	if code, ok := apps.ParseFlags(fs, args); !ok {
		return code
	}
	if f.file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: chartkeeper diff -f cr.yaml [--watches-file watches.yaml] [--kubeconfig path] [--exit-code]")
		return ExitConfig
	}
	objs, err := readObjects(f.file)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper diff: %v\n", err)
		return ExitConfig
	}
	ws, err := watches.Load(f.watchesFile)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper diff: invalid watches file %s:\n%s\n", f.watchesFile, indent(err.Error()))
		return ExitConfig
	}
	d, err := newDiffer(f.kubeconfig, ws)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper diff: %v\n", err)
		return ExitConfig
	}
	changed := false
	for _, obj := range objs {
		c, err := d.diff(context.Background(), obj, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "chartkeeper diff: %s %s/%s: %v\n", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			return ExitFailure
		}
		changed = changed || c
	}
	if changed && f.exitCode {
		return ExitChanges
	}
	return ExitOK
}

// differ plans the upgrades of custom resources against one cluster.
type differ struct {
	engine  *release.Engine
	live    client.Client
	targets map[string]release.Target // by GroupVersionKind string
}

func newDiffer(kubeconfig string, ws []watches.Watch) (*differ, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes configuration: %w", err)
	}
	hc, err := helm.New(cfg, func(string, ...any) {})
	if err != nil {
		return nil, err
	}
	live, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	reg, err := newRegistry(ws)
	if err != nil {
		return nil, err
	}
	engine, err := release.NewEngine(hc, live, live, release.WithHooks(reg))
	if err != nil {
		return nil, err
	}
	d := &differ{engine: engine, live: live, targets: map[string]release.Target{}}
	for _, w := range ws {
		d.targets[w.GroupVersionKind().String()] = release.NewTarget(w)
	}
	return d, nil
}

// diff prints the plan of one resource and reports whether it changes anything.
func (d *differ) diff(ctx context.Context, obj *unstructured.Unstructured, out io.Writer) (bool, error) {
	t, ok := d.targets[obj.GroupVersionKind().String()]
	if !ok {
		return false, fmt.Errorf("no watch for %s in the watches file", obj.GroupVersionKind())
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace("default")
	}
	// The resource in the cluster gives its identity (released objects are
	// labelled with its UID); the file gives the spec to plan.
	inCluster := &unstructured.Unstructured{}
	inCluster.SetGroupVersionKind(obj.GroupVersionKind())
	switch err := d.live.Get(ctx, client.ObjectKeyFromObject(obj), inCluster); {
	case err == nil:
		obj.SetUID(inCluster.GetUID())
		obj.SetGeneration(inCluster.GetGeneration())
	case !apierrors.IsNotFound(err):
		return false, err
	}
	p, err := d.engine.Plan(ctx, t, obj)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "plan %s: %s %s/%s, release %s/%s from revision %d (chart %s): %s\n", p.Status.Digest, obj.GetKind(),
		obj.GetNamespace(), obj.GetName(), p.ReleaseNamespace, p.ReleaseName, p.Status.FromRevision, p.Status.Chart, countChanges(p.Changes))
	for _, ch := range p.Changes {
		text, err := unifiedDiff(ch)
		if err != nil {
			return false, err
		}
		fmt.Fprint(out, p.Redact(text))
	}
	return len(p.Changes) > 0, nil
}

func countChanges(chs []helm.Change) string {
	n := map[helm.ChangeAction]int{}
	for _, ch := range chs {
		n[ch.Action]++
	}
	s := fmt.Sprintf("%d to create, %d to update, %d to delete", n[helm.ChangeCreate], n[helm.ChangeUpdate], n[helm.ChangeDelete])
	if n[helm.ChangeKeep] > 0 {
		s += fmt.Sprintf(", %d kept though the chart drops them", n[helm.ChangeKeep])
	}
	return s
}

// unifiedDiff is one change as a unified diff of the object's YAML, live
// (or nothing) against what the upgrade would leave (or nothing), without
// what every write changes and without any Secret value.
func unifiedDiff(ch helm.Change) (string, error) {
	before, err := diffYAML(ch.Before, ch.After, "old")
	if err != nil {
		return "", err
	}
	after, err := diffYAML(ch.After, ch.Before, "new")
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s %s", ch.GVK.Kind, ch.Name)
	if ch.Namespace != "" {
		name = fmt.Sprintf("%s %s/%s", ch.GVK.Kind, ch.Namespace, ch.Name)
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(before), B: difflib.SplitLines(after),
		FromFile: name + " (live)", ToFile: fmt.Sprintf("%s (%s)", name, strings.ToLower(string(ch.Action))), Context: 3,
	})
	if err != nil {
		return "", err
	}
	if ch.Action == helm.ChangeKeep {
		text = fmt.Sprintf("# %s: dropped by the chart, kept (helm.sh/resource-policy: keep)\n", name)
	}
	return text, nil
}

// diffYAML is an object as a diff shows it: no status, none of the
// metadata every write changes, and a Secret's values replaced: the same
// on both sides when equal to other's, "redacted (<side> value)" when
// not, so that a change shows and no value does.
func diffYAML(u, other *unstructured.Unstructured, side string) (string, error) {
	if u == nil {
		return "", nil
	}
	obj := u.DeepCopy()
	delete(obj.Object, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	if obj.GetKind() == "Secret" && obj.GroupVersionKind().Group == "" {
		for _, field := range []string{"data", "stringData"} {
			m, _, _ := unstructured.NestedMap(obj.Object, field)
			var om map[string]any
			if other != nil {
				om, _, _ = unstructured.NestedMap(other.Object, field)
			}
			for k, v := range m {
				if ov, ok := om[k]; ok && ov == v {
					m[k] = "redacted"
				} else {
					m[k] = "redacted (" + side + " value)"
				}
			}
			if m != nil {
				_ = unstructured.SetNestedMap(obj.Object, m, field)
			}
		}
	}
	b, err := yaml.Marshal(obj.Object)
	return string(b), err
}

// readObjects reads the custom resources of a YAML file (or standard input).
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("%s: every object needs a kind and a name", path)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no custom resource", path)
	}
	return out, nil
}
