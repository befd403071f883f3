package manifests

import (
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The CRD rules of the generated role follow the watch's crds policy, and
// count the CRDs of crds/ and of the templates alike: never delete,
// never "*".
func TestCRDRulesFollowThePolicy(t *testing.T) {
	ch, err := loader.Load("../../test/corpus/certissuer")
	if err != nil {
		t.Fatal(err)
	}
	const names = "[certificates.certs.corpus.chartkeeper.dev issuers.certs.corpus.chartkeeper.dev]"
	for _, tc := range []struct {
		policy string
		want   []string // the role's customresourcedefinitions rules: resourceNames verbs
	}{
		{"", []string{"[] [create]", names + " [get]"}},
		{watches.CRDPolicyCreate, []string{"[] [create]", names + " [get]"}},
		{watches.CRDPolicyCreateAndReplace, []string{"[] [create]", names + " [get update patch]"}},
		{watches.CRDPolicySkip, nil},
	} {
		t.Run("policy "+tc.policy, func(t *testing.T) {
			w := watches.Watch{Group: "golden.chartkeeper.dev", Version: "v1", Kind: "Golden", Chart: ch, CRDs: &watches.CRDs{Policy: tc.policy}}
			role, notes, err := Role([]watches.Watch{w}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range role.Rules {
				for _, res := range r.Resources {
					if res == "customresourcedefinitions" {
						got = append(got, fmt.Sprint(r.ResourceNames, " ", r.Verbs))
						checkNeverDelete(t, r)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("customresourcedefinitions rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !strings.Contains(strings.Join(notes, "\n"), "crds.policy") {
				t.Errorf("the notes do not explain the CRD rules: %v", notes)
			}
		})
	}
}

func checkNeverDelete(t *testing.T, r rbacv1.PolicyRule) {
	t.Helper()
	for _, v := range r.Verbs {
		if v == "delete" || v == "deletecollection" || v == "*" {
			t.Errorf("a CRD rule grants %s: %+v", v, r)
		}
	}
}
