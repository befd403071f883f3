package osdk

import (
	"context"
	"io"
	"strings"

	"github.com/operator-framework/operator-lib/handler"
	"helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownerRefSecrets is the Secrets client operator-sdk gives Helm's Secret
// driver: every release Secret it creates or updates gets a controller
// reference to the custom resource (internal/helm/client/actionconfig.go,
// ownerRefSecretClient).
type ownerRefSecrets struct {
	clientcorev1.SecretInterface
	refs []metav1.OwnerReference
}

func (c *ownerRefSecrets) Create(ctx context.Context, in *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	in.OwnerReferences = append(in.OwnerReferences, c.refs...)
	return c.SecretInterface.Create(ctx, in, opts)
}

func (c *ownerRefSecrets) Update(ctx context.Context, in *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	in.OwnerReferences = append(in.OwnerReferences, c.refs...)
	return c.SecretInterface.Update(ctx, in, opts)
}

// ownerRefKube is the Helm kube client operator-sdk releases with: each
// object Helm builds from a manifest gets a controller reference to the
// custom resource where Kubernetes allows one (a namespaced object of the
// resource's namespace, for a namespaced resource), unless the chart marks
// it helm.sh/resource-policy: keep; the others get operator-lib's owner
// annotations instead (internal/helm/client/client.go,
// ownerRefInjectingClient). The references are on the live objects only,
// not in the stored manifest. It embeds Helm's client whole, so Helm's
// actions find every interface of it they look for.
type ownerRefKube struct {
	*kube.Client
	owner client.Object
}

func (c *ownerRefKube) Build(reader io.Reader, validate bool) (kube.ResourceList, error) {
	list, err := c.Client.Build(reader, validate)
	if err != nil {
		return list, err
	}
	err = list.Visit(func(r *resource.Info, err error) error {
		if err != nil {
			return err
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.Object)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: content}
		if c.ownable(r) && !keep(u.GetAnnotations()) {
			u.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(c.owner, c.owner.GetObjectKind().GroupVersionKind())})
			return nil
		}
		return handler.SetOwnerAnnotations(c.owner, u)
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// ownable says whether a controller reference from the (namespaced)
// owner to the object is allowed: the object is namespaced and in the
// owner's namespace (operator-sdk's k8sutil.SupportsOwnerReference).
func (c *ownerRefKube) ownable(r *resource.Info) bool {
	if r.Mapping == nil || r.Mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return false
	}
	ns := r.Namespace
	if ns == "" {
		ns = c.Namespace
	}
	return ns == c.owner.GetNamespace()
}

func keep(annotations map[string]string) bool {
	v, ok := annotations[kube.ResourcePolicyAnno]
	return ok && strings.ToLower(strings.TrimSpace(v)) == kube.KeepPolicy
}
