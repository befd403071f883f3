package cli

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/chartkeeper/chartkeeper/internal/operator"
)

// signingKeyRef resolves --release-signing-key: "namespace/name", or a
// name (default operator.SigningKeySecret) in the operator's own
// namespace: its kubeconfig context's, or in a Pod its ServiceAccount's
// (POD_NAMESPACE, else the mounted namespace file).
func signingKeyRef(flag, kubeconfig string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(flag, "/")
	if !ok {
		ns, name = "", flag
	}
	if name == "" {
		name = operator.SigningKeySecret
	}
	if ns == "" {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = kubeconfig
		own, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
		if err != nil {
			return types.NamespacedName{}, fmt.Errorf("--release-signing-key: the operator's namespace: %w", err)
		}
		ns = own
	}
	for _, part := range []string{ns, name} {
		if errs := validation.IsDNS1123Subdomain(part); len(errs) > 0 {
			return types.NamespacedName{}, fmt.Errorf("--release-signing-key %q: %q: %s", flag, part, strings.Join(errs, "; "))
		}
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
