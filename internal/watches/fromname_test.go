package watches

import (
	"strings"
	"testing"
)

// A release namespace, or an impersonated account of a fixed namespace,
// taken from the resource's name is refused at load, naming the field and
// the opt-in, unless the watch opts in.
func TestTemplatesFromTheResourceName(t *testing.T) {
	tests := []struct {
		name    string
		fields  string // YAML lines of the watch, after chart
		wantErr []string
	}{
		{name: "default release namespace", fields: ""},
		{name: "fixed release namespace", fields: "  releaseNamespace: shared\n"},
		{name: "namespace follows the resource's namespace", fields: "  releaseNamespace: \"{{ .Namespace }}-target\"\n"},
		{name: "dot of a with over the namespace", fields: "  releaseNamespace: \"{{ with .Namespace }}{{ . }}{{ end }}\"\n"},
		{name: "namespace from the name", fields: "  releaseNamespace: \"{{ .Name }}\"\n",
			wantErr: []string{`field "releaseNamespace": "{{ .Name }}" takes the release namespace from the resource's name`, "allowReleaseNamespaceFromName: true"}},
		{name: "namespace and name", fields: "  releaseNamespace: \"{{ .Namespace }}-{{ .Name }}\"\n",
			wantErr: []string{`field "releaseNamespace"`}},
		{name: "name behind a condition", fields: "  releaseNamespace: '{{ if eq .Name \"x\" }}kube-system{{ else }}apps{{ end }}'\n",
			wantErr: []string{`field "releaseNamespace"`}},
		{name: "name through $", fields: "  releaseNamespace: \"{{ $.Name }}\"\n", wantErr: []string{`field "releaseNamespace"`}},
		{name: "name through a variable", fields: "  releaseNamespace: \"{{ $r := . }}{{ $r.Name }}\"\n", wantErr: []string{`field "releaseNamespace"`}},
		{name: "name printed with the whole resource", fields: "  releaseNamespace: \"{{ print . }}\"\n", wantErr: []string{`field "releaseNamespace"`}},
		{name: "namespace from the name, allowed", fields: "  releaseNamespace: \"{{ .Name }}\"\n  allowReleaseNamespaceFromName: true\n"},

		{name: "account of the resource's namespace", fields: "  impersonate: {serviceAccount: \"{{ .Namespace }}/chartkeeper-release\"}\n"},
		{name: "one fixed account", fields: "  impersonate: {serviceAccount: platform/releaser}\n"},
		{name: "account per namespace in a fixed one", fields: "  impersonate: {serviceAccount: \"platform/{{ .Namespace }}-releaser\"}\n"},
		{name: "account named after the resource in its release namespace", fields: "  impersonate: {serviceAccount: \"{{ .Name }}-releaser\"}\n"},
		{name: "account from the name in a fixed namespace", fields: "  impersonate: {serviceAccount: \"platform/{{ .Name }}\"}\n",
			wantErr: []string{`field "impersonate.serviceAccount": "platform/{{ .Name }}" takes the account's name from the resource's name in the fixed namespace platform`, "impersonate.allowServiceAccountFromName: true"}},
		{name: "account suffixed with the name", fields: "  impersonate: {serviceAccount: \"platform/deploy-{{ .Name }}\"}\n",
			wantErr: []string{`field "impersonate.serviceAccount"`}},
		{name: "account from the name, allowed", fields: "  impersonate: {serviceAccount: \"platform/{{ .Name }}\", allowServiceAccountFromName: true}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("- version: v1\n  kind: Tenant\n  chart: chart\n"+tt.fields), "testdata")
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// With the opt-in, the release namespace follows the name, as written.
func TestReleaseNamespaceFromNameAllowed(t *testing.T) {
	ws, err := Parse([]byte("- version: v1\n  kind: Tenant\n  chart: chart\n  releaseNamespace: \"{{ .Name }}\"\n  allowReleaseNamespaceFromName: true\n"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if ref, err := ws[0].Release("team-c", ""); err != nil || ref.Namespace != "team-c" {
		t.Errorf("Release(team-c) = %+v, %v; want namespace team-c", ref, err)
	}
}
