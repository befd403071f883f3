package manifests

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// operatorName is the project's name: the chart's, the OLM package's and
// the prefix config/default gives every object (namePrefix).
const operatorName = "chartkeeper"

// operatorVersion is the version of the operator chart and of the bundle's
// ClusterServiceVersion.
const operatorVersion = "0.1.0"

// Operator is what config/ deploys (config/manager, config/rbac and the
// generated CRDs and role), read once for the operator chart and the OLM
// bundle.
type Operator struct {
	// Deployment is the manager Deployment of config/manager.
	Deployment *appsv1.Deployment
	// Role is the manager ClusterRole (config/rbac/role.yaml, generated).
	Role *rbacv1.ClusterRole
	// LeaderElection is the leader-election Role of config/rbac.
	LeaderElection *rbacv1.Role
	// CRDs are the generated CRDs, by file name under crd/bases, sorted.
	CRDs []OperatorCRD
}

// OperatorCRD is one generated CRD: its file name, YAML and object.
type OperatorCRD struct {
	File string
	YAML []byte
	CRD  *apiextv1.CustomResourceDefinition
}

// readOperator reads the Operator from dir/manager and dir/rbac, with the
// CRDs and role of files (Generate's output). It returns nil when dir has
// no manager (a project that deploys no operator).
func readOperator(dir string, files map[string][]byte) (*Operator, error) {
	managerPath := filepath.Join(dir, "manager", "manager.yaml")
	if _, err := os.Stat(managerPath); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	o := &Operator{Deployment: &appsv1.Deployment{}, Role: &rbacv1.ClusterRole{}, LeaderElection: &rbacv1.Role{}}
	if err := readObject(managerPath, "Deployment", o.Deployment); err != nil {
		return nil, err
	}
	if err := readObject(filepath.Join(dir, "rbac", "leader_election_role.yaml"), "Role", o.LeaderElection); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(files[filepath.Join("rbac", "role.yaml")], o.Role); err != nil {
		return nil, fmt.Errorf("rbac/role.yaml: %w", err)
	}
	// The manager runs with --metrics-secure: authenticating and
	// authorizing scrapers needs config/rbac's metrics-auth rules, which
	// the chart and the bundle grant in the manager's own ClusterRole.
	metricsAuth := &rbacv1.ClusterRole{}
	switch err := readObject(filepath.Join(dir, "rbac", "metrics_auth_role.yaml"), "ClusterRole", metricsAuth); {
	case err == nil:
		o.Role.Rules = append(o.Role.Rules, metricsAuth.Rules...)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	var rels []string
	for rel := range files {
		if filepath.Dir(rel) == filepath.Join("crd", "bases") {
			rels = append(rels, rel)
		}
	}
	sort.Strings(rels)
	for _, rel := range rels {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(files[rel], crd); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		o.CRDs = append(o.CRDs, OperatorCRD{File: filepath.Base(rel), YAML: files[rel], CRD: crd})
	}
	if len(o.Deployment.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("%s: the Deployment has no container", managerPath)
	}
	return o, nil
}

// readObject decodes the document of kind in the YAML file path into obj.
func readObject(path, kind string, obj any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, doc := range releaseutil.SplitManifests(string(b)) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if head.Kind == kind {
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
	}
	return fmt.Errorf("%s: no %s", path, kind)
}

// container is the manager container of the Deployment.
func (o *Operator) container() *corev1.Container {
	return &o.Deployment.Spec.Template.Spec.Containers[0]
}

// flag returns the value of the manager's --name=value argument.
func (o *Operator) flag(name string) (string, bool) {
	for _, a := range o.container().Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name {
			return "true", true
		}
	}
	return "", false
}

// OperatorFiles returns the operator's Helm chart (under
// chart/chartkeeper/) and OLM bundle (under bundle/) generated from what
// dir and files (Generate's output) deploy; none when dir has no manager.
func OperatorFiles(dir string, files map[string][]byte) (map[string][]byte, error) {
	o, err := readOperator(dir, files)
	if err != nil || o == nil {
		return nil, err
	}
	out := map[string][]byte{}
	chart, err := o.Chart()
	if err != nil {
		return nil, err
	}
	for rel, b := range chart {
		out[filepath.Join("chart", operatorName, rel)] = b
	}
	bundle, err := o.Bundle()
	if err != nil {
		return nil, err
	}
	for rel, b := range bundle {
		out[filepath.Join("bundle", rel)] = b
	}
	return out, nil
}
