package manifests

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The OLM bundle's package and channel.
const (
	bundleChannel = "alpha"
	csvFile       = operatorName + ".clusterserviceversion.yaml"
)

// ClusterServiceVersion is the part of OLM's ClusterServiceVersion
// (operators.coreos.com/v1alpha1) the bundle fills in.
type ClusterServiceVersion struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   csvMetadata `json:"metadata"`
	Spec       CSVSpec     `json:"spec"`
}

type csvMetadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CSVSpec is the ClusterServiceVersion's spec.
type CSVSpec struct {
	DisplayName               string           `json:"displayName"`
	Description               string           `json:"description"`
	Version                   string           `json:"version"`
	Maturity                  string           `json:"maturity"`
	Provider                  map[string]any   `json:"provider"`
	Keywords                  []string         `json:"keywords"`
	InstallModes              []InstallMode    `json:"installModes"`
	CustomResourceDefinitions CSVCRDs          `json:"customresourcedefinitions"`
	Install                   InstallStrategy  `json:"install"`
	Links                     []map[string]any `json:"links,omitempty"`
}

// InstallMode says whether the operator supports a way of watching.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// CSVCRDs lists the CRDs the operator owns.
type CSVCRDs struct {
	Owned []OwnedCRD `json:"owned"`
}

// OwnedCRD is one CRD the operator owns.
type OwnedCRD struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

// InstallStrategy is the "deployment" install strategy.
type InstallStrategy struct {
	Strategy string              `json:"strategy"`
	Spec     InstallStrategySpec `json:"spec"`
}

// InstallStrategySpec is what OLM creates: the Deployments and the
// permissions of their ServiceAccounts.
type InstallStrategySpec struct {
	Deployments        []CSVDeployment `json:"deployments"`
	ClusterPermissions []CSVPermission `json:"clusterPermissions"`
	Permissions        []CSVPermission `json:"permissions"`
}

// CSVDeployment is a Deployment OLM creates.
type CSVDeployment struct {
	Name string                `json:"name"`
	Spec appsv1.DeploymentSpec `json:"spec"`
}

// CSVPermission is the rules OLM grants a ServiceAccount (cluster-wide or
// in the install namespace).
type CSVPermission struct {
	ServiceAccountName string              `json:"serviceAccountName"`
	Rules              []rbacv1.PolicyRule `json:"rules"`
}

// bundleAnnotations are the registry+v1 bundle's annotations, in
// metadata/annotations.yaml and as bundle.Dockerfile's labels.
var bundleAnnotations = map[string]string{
	"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
	"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
	"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
	"operators.operatorframework.io.bundle.package.v1":         operatorName,
	"operators.operatorframework.io.bundle.channels.v1":        bundleChannel,
	"operators.operatorframework.io.bundle.channel.default.v1": bundleChannel,
}

// Bundle returns the operator's OLM bundle (registry+v1), by path under
// the bundle directory: manifests/ with the ClusterServiceVersion and the
// CRDs, metadata/annotations.yaml, and bundle.Dockerfile (build context:
// the bundle directory).
func (o *Operator) Bundle() (map[string][]byte, error) {
	out := map[string][]byte{}
	csv, err := o.csv()
	if err != nil {
		return nil, err
	}
	m, err := toMap(csv)
	if err != nil {
		return nil, err
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	out[filepath.Join("manifests", csvFile)] = append([]byte(header), b...)
	for _, crd := range o.CRDs {
		out[filepath.Join("manifests", crd.File)] = crd.YAML
	}
	keys := make([]string, 0, len(bundleAnnotations))
	for k := range bundleAnnotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ann, df strings.Builder
	ann.WriteString(header + "annotations:\n")
	df.WriteString(header + "FROM scratch\n\n")
	for _, k := range keys {
		fmt.Fprintf(&ann, "  %s: %s\n", k, bundleAnnotations[k])
		fmt.Fprintf(&df, "LABEL %s=%s\n", k, bundleAnnotations[k])
	}
	df.WriteString("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n")
	out[filepath.Join("metadata", "annotations.yaml")] = []byte(ann.String())
	out["bundle.Dockerfile"] = []byte(df.String())
	return out, nil
}

// csv returns the ClusterServiceVersion: config's manager Deployment (named
// as config/default names it, WATCH_NAMESPACE the namespaces OLM targets),
// the manager ClusterRole as clusterPermissions and the leader-election
// Role as permissions of its ServiceAccount, and every CRD owned.
func (o *Operator) csv() (*ClusterServiceVersion, error) {
	name := operatorName + "-" + o.Deployment.Name
	sa := operatorName + "-" + o.Deployment.Spec.Template.Spec.ServiceAccountName
	spec := o.Deployment.Spec.DeepCopy()
	spec.Template.Spec.ServiceAccountName = sa
	ctr := &spec.Template.Spec.Containers[0]
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"}}})
	csv := &ClusterServiceVersion{
		APIVersion: "operators.coreos.com/v1alpha1",
		Kind:       "ClusterServiceVersion",
		Metadata: csvMetadata{
			Name: operatorName + ".v" + operatorVersion,
			Annotations: map[string]string{
				"capabilities":   "Basic Install",
				"containerImage": ctr.Image,
				"categories":     "Application Runtime",
			},
		},
		Spec: CSVSpec{
			DisplayName: "chartkeeper",
			Description: "chartkeeper keeps one Helm release per custom resource: watches.yaml maps each kind to a chart, the operator installs, upgrades and rolls back its release.",
			Version:     operatorVersion,
			Maturity:    bundleChannel,
			Provider:    map[string]any{"name": operatorName},
			Keywords:    []string{"helm", "operator"},
			Install: InstallStrategy{Strategy: "deployment", Spec: InstallStrategySpec{
				Deployments:        []CSVDeployment{{Name: name, Spec: *spec}},
				ClusterPermissions: []CSVPermission{{ServiceAccountName: sa, Rules: o.Role.Rules}},
				Permissions:        []CSVPermission{{ServiceAccountName: sa, Rules: o.LeaderElection.Rules}},
			}},
		},
	}
	for _, t := range []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"} {
		csv.Spec.InstallModes = append(csv.Spec.InstallModes, InstallMode{Type: t, Supported: true})
	}
	for _, c := range o.CRDs {
		for _, v := range c.CRD.Spec.Versions {
			if !v.Storage {
				continue
			}
			desc := ""
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				desc = v.Schema.OpenAPIV3Schema.Description
			}
			if desc == "" {
				return nil, fmt.Errorf("CRD %s has no description for the bundle", c.CRD.Name)
			}
			csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, OwnedCRD{
				Name: c.CRD.Name, Version: v.Name, Kind: c.CRD.Spec.Names.Kind, DisplayName: c.CRD.Spec.Names.Kind, Description: desc})
		}
	}
	return csv, nil
}
