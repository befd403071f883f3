package watches

import (
	"strings"
	"testing"
)

// parseImpersonate loads one watch with the impersonate block given (a
// YAML flow mapping) and its release namespace template.
func parseImpersonate(t *testing.T, block, releaseNamespace string) (Watch, error) {
	t.Helper()
	y := "- version: v1\n  kind: TenantApp\n  chart: chart\n  impersonate: " + block + "\n"
	if releaseNamespace != "" {
		y += "  releaseNamespace: " + releaseNamespace + "\n"
	}
	ws, err := Parse([]byte(y), "testdata")
	if err != nil {
		return Watch{}, err
	}
	return ws[0], nil
}

func TestServiceAccountFor(t *testing.T) {
	tests := []struct {
		name             string
		block            string
		releaseNamespace string // template; "": the resource's namespace
		resource         string // name of the resource, in namespace team-a
		override         string // its chartkeeper.dev/service-account annotation
		want             string // namespace/name; "" with wantErr
		wantUser         string
		wantErr          []string
	}{
		{name: "account of the release namespace", block: `{serviceAccount: chartkeeper-release}`,
			resource: "web", want: "team-a/chartkeeper-release", wantUser: "system:serviceaccount:team-a:chartkeeper-release"},
		{name: "namespace from the resource", block: `{serviceAccount: "{{ .Namespace }}/chartkeeper-release"}`,
			resource: "web", want: "team-a/chartkeeper-release"},
		{name: "name from the resource", block: `{serviceAccount: "{{ .Name }}-releaser"}`,
			resource: "web", want: "team-a/web-releaser"},
		{name: "fixed namespace may be any", block: `{serviceAccount: platform/releaser}`,
			resource: "web", want: "platform/releaser"},
		{name: "fixed namespace named like a sample", block: `{serviceAccount: ns-a/releaser}`,
			resource: "web", want: "ns-a/releaser"},
		{name: "resource's namespace must be the release namespace", block: `{serviceAccount: "{{ .Namespace }}/chartkeeper-release"}`,
			releaseNamespace: "apps", resource: "web",
			wantErr: []string{"service account team-a/chartkeeper-release is outside the release namespace apps"}},
		{name: "no namespace: the release namespace's", block: `{serviceAccount: chartkeeper-release}`,
			releaseNamespace: "apps", resource: "web", want: "apps/chartkeeper-release"},
		{name: "a namespace the resource makes invalid", block: `{serviceAccount: "{{ .Name }}/releaser"}`,
			resource: "web.v2", wantErr: []string{`service account "web.v2/releaser": namespace "web.v2" is not valid`}},
		{name: "override refused by default", block: `{serviceAccount: chartkeeper-release}`,
			resource: "web", override: "admin",
			wantErr: []string{`the resource names service account "admin", but its watch does not allow that (impersonate.allowOverride in watches.yaml)`}},
		{name: "override allowed", block: `{serviceAccount: chartkeeper-release, allowOverride: true}`,
			resource: "web", override: "web-deployer", want: "team-a/web-deployer"},
		{name: "override in the release namespace", block: `{serviceAccount: chartkeeper-release, allowOverride: true}`,
			releaseNamespace: "apps", resource: "web", override: "web-deployer", want: "apps/web-deployer"},
		{name: "override naming another namespace", block: `{serviceAccount: chartkeeper-release, allowOverride: true}`,
			resource: "web", override: "kube-system/admin",
			wantErr: []string{`service account "kube-system/admin": name an account of the release namespace team-a, without a namespace`}},
		{name: "override not a name", block: `{serviceAccount: chartkeeper-release, allowOverride: true}`,
			resource: "web", override: "Admin!",
			wantErr: []string{`service account "Admin!": name "Admin!" is not valid`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := parseImpersonate(t, tt.block, tt.releaseNamespace)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := w.Release(tt.resource, "team-a")
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.ServiceAccountFor(tt.resource, "team-a", ref.Namespace, tt.override)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if tt.wantUser != "" && got.UserName() != tt.wantUser {
				t.Errorf("user %q, want %q", got.UserName(), tt.wantUser)
			}
		})
	}
}

func TestServiceAccountForWithoutImpersonate(t *testing.T) {
	ws, err := Parse([]byte("- version: v1\n  kind: TenantApp\n  chart: chart\n"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ws[0].ServiceAccountFor("web", "team-a", "team-a", ""); err != nil || !got.IsZero() {
		t.Errorf("no impersonate: %s, %v; want the operator's own identity", got, err)
	}
	_, err = ws[0].ServiceAccountFor("web", "team-a", "team-a", "admin")
	if err == nil || !strings.Contains(err.Error(), `names service account "admin", but its watch does not impersonate`) {
		t.Errorf("an override without impersonate: %v", err)
	}
}

func TestImpersonateLoadErrors(t *testing.T) {
	tests := []struct{ name, block, want string }{
		{"account missing", `{allowOverride: true}`, `field "impersonate.serviceAccount": must name the account`},
		{"blank account", `{serviceAccount: " "}`, `field "impersonate.serviceAccount": must name the account`},
		{"does not parse", `{serviceAccount: "{{ .Namespace "}`, `field "impersonate.serviceAccount"`},
		{"unknown field of the template", `{serviceAccount: "{{ .Release }}"}`, `field "impersonate.serviceAccount"`},
		{"loops", `{serviceAccount: "{{ range .Name }}x{{ end }}"}`, "may not loop"},
		{"sprig is not there", `{serviceAccount: "{{ .Kind | lower }}"}`, `function "lower" not defined`},
		{"a kind is no account name", `{serviceAccount: "{{ .Kind }}"}`, `field "impersonate.serviceAccount": service account "K": name "K" is not valid`},
		{"invalid namespace", `{serviceAccount: "Team/releaser"}`, `namespace "Team" is not valid`},
		{"invalid name", `{serviceAccount: "releaser_1"}`, `name "releaser_1" is not valid`},
		{"unknown field", `{serviceAccount: x, allowOverrides: true}`, `unknown field "allowOverrides"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseImpersonate(t, tt.block, "")
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestFixedServiceAccountName(t *testing.T) {
	tests := []struct{ block, want string }{
		{`{serviceAccount: chartkeeper-release}`, "chartkeeper-release"},
		{`{serviceAccount: "{{ .Namespace }}/chartkeeper-release"}`, "chartkeeper-release"},
		{`{serviceAccount: platform/releaser}`, "releaser"},
		{`{serviceAccount: "{{ .Name }}-releaser"}`, ""},
		{`{serviceAccount: chartkeeper-release, allowOverride: true}`, ""}, // any name of the namespace
	}
	for _, tt := range tests {
		w, err := parseImpersonate(t, tt.block, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Impersonate.FixedServiceAccountName(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.block, got, tt.want)
		}
	}
	if got := (*Impersonate)(nil).FixedServiceAccountName(); got != "" {
		t.Errorf("no impersonate: %q", got)
	}
}
