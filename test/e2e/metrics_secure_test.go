package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// TestSecureMetrics: with --metrics-secure the endpoint serves HTTPS and
// lets only a bearer token bound to config/rbac's metrics-reader
// ClusterRole read it (the operator checks tokens with the RBAC of
// config/rbac's metrics-auth-role); without it, plain HTTP as make run
// serves it on loopback.
func TestSecureMetrics(t *testing.T) {
	parallel(t, quick)
	addr := freeAddr(t)
	env, ns, op := appFixture(t, testWatches(), "--metrics-secure", "--metrics-bind-address", addr)
	url := "https://" + addr + "/metrics"
	reader := metricsToken(t, env, ns, "prometheus", configClusterRole(t, "metrics_reader_role.yaml"))
	stranger := metricsToken(t, env, ns, "stranger", nil)
	// The metrics server may start listening a moment after /readyz answers
	// (it makes its self-signed certificate first).
	op.eventually(t, 30*time.Second, func(context.Context) error {
		_, _, err := getTLS(url, "")
		return err
	})

	tests := []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token without the metrics-reader role", stranger, http.StatusForbidden},
		{"a token with the metrics-reader role", reader, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := scrapeTLS(t, url, tc.token)
			if code != tc.want {
				t.Fatalf("GET %s = %d, want %d: %s", url, code, tc.want, body)
			}
			if tc.want == http.StatusOK && !strings.Contains(body, "chartkeeper_api_requests_total") {
				t.Errorf("the metrics lack chartkeeper's:\n%s", body)
			}
		})
	}

	t.Run("plain HTTP without --metrics-secure", func(t *testing.T) {
		plain := freeAddr(t)
		p := startConfined(t, env, ns, testWatches(),
			"--metrics-bind-address", plain)
		p.eventually(t, 30*time.Second, get200("http://"+plain+"/metrics"))
		if body := scrapeRaw(t, "http://"+plain+"/metrics"); !strings.Contains(body, "chartkeeper_api_requests_total") {
			t.Errorf("plain HTTP metrics lack chartkeeper's:\n%s", body)
		}
	})
}

// metricsToken makes a ServiceAccount in ns, bound to role when there is
// one (and authorized to get /metrics before it returns), and returns a
// token of it from the TokenRequest API.
func metricsToken(t *testing.T, env *testenv.Env, ns, name string, role *rbacv1.ClusterRole) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	if role != nil {
		role.ObjectMeta = metav1.ObjectMeta{Name: "chartkeeper-e2e-" + ns + "-" + name}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		}
		for _, obj := range []client.Object{role, binding} {
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
			}
		}
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), binding)
			_ = env.Client.Delete(context.Background(), role)
		})
		// The operator caches a denial for a while: ask only once the
		// API server's authorizer allows it.
		testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
			review := &authorizationv1.SubjectAccessReview{}
			review.Spec.User = fmt.Sprintf("system:serviceaccount:%s:%s", ns, name)
			review.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}
			if err := env.Client.Create(ctx, review); err != nil {
				return err
			}
			if !review.Status.Allowed {
				return fmt.Errorf("%s may not yet get /metrics", review.Spec.User)
			}
			return nil
		})
	}
	tok, err := env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", name, err)
	}
	return tok.Status.Token
}

// scrapeTLS is getTLS, failing the test on a transport error.
func scrapeTLS(t *testing.T, url, token string) (int, string) {
	t.Helper()
	code, body, err := getTLS(url, token)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// getTLS gets a metrics URL served with a self-signed certificate, with a
// bearer token unless it is "".
func getTLS(url, token string) (int, string, error) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the operator's certificate is self-signed
	}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
