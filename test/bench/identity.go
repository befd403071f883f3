package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// systemNamespace holds the subjects' ServiceAccounts.
const systemNamespace = "chartkeeper-bench"

// identity is a subject's ServiceAccount and the FlowSchema that counts its
// requests.
type identity struct {
	// Kubeconfig authenticates as the ServiceAccount.
	Kubeconfig string
	// FlowSchema classifies every request of the ServiceAccount.
	FlowSchema string
}

// newIdentity creates (or reuses) the subject's ServiceAccount bound to
// cluster-admin, so that every subject has the same rights, and a
// FlowSchema matching only it in the exempt priority level, so that the API
// server neither queues nor throttles it and counts its requests apart.
func newIdentity(ctx context.Context, cs kubernetes.Interface, admin *rest.Config, subject, dir string) (identity, error) {
	name := "bench-" + subject
	objs := []func() error{
		func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNamespace}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().ServiceAccounts(systemNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: systemNamespace}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, flowSchema(name), metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return identity{}, fmt.Errorf("identity of %s: %w", subject, err)
		}
	}
	if err := waitFlowSchemaSeen(ctx, cs, name); err != nil {
		return identity{}, err
	}
	tok, err := cs.CoreV1().ServiceAccounts(systemNamespace).CreateToken(ctx, name, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(24 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return identity{}, fmt.Errorf("token of %s: %w", subject, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthority: admin.CAFile, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: name, Namespace: systemNamespace}
	cfg.CurrentContext = name
	path := filepath.Join(dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return identity{}, err
	}
	return identity{Kubeconfig: path, FlowSchema: name}, nil
}

func flowSchema(name string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"},
			MatchingPrecedence:         100,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{
					Kind:           flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: systemNamespace, Name: name},
				}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"},
				}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
}

// waitFlowSchemaSeen waits until the API server's flow control has taken
// the FlowSchema in (it then writes the Dangling condition).
func waitFlowSchemaSeen(ctx context.Context, cs kubernetes.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		fs, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for _, c := range fs.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == flowcontrolv1.ConditionFalse {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("FlowSchema %s was not taken in by the API server: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
