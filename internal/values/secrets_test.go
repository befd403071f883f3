package values

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
)

func TestSecretStringsFollowTheSchema(t *testing.T) {
	ch := &chart.Chart{Schema: []byte(`{
	  "type": "object",
	  "properties": {
	    "password": {"type": "string", "writeOnly": true},
	    "db": {"type": "object", "properties": {"token": {"type": "string", "format": "password"}, "host": {"type": "string"}}},
	    "pin": {"type": "string", "writeOnly": true},
	    "name": {"type": "string"}
	  }}`)}
	vals := map[string]any{
		"password": "hunter2-canary",
		"db":       map[string]any{"token": "tok-123456", "host": "db.example"},
		"pin":      "123", // too short to hide
		"name":     "hunter2-canary-name",
	}
	got := SecretStrings(ch, vals)
	if fmt.Sprint(got) != "[hunter2-canary tok-123456]" {
		t.Fatalf("SecretStrings = %q", got)
	}
	if SecretStrings(&chart.Chart{}, vals) != nil || SecretStrings(&chart.Chart{Schema: []byte("{")}, vals) != nil {
		t.Error("a chart without a (valid) schema has no secrets")
	}
}

func TestRedactErrorKeepsTheChain(t *testing.T) {
	sentinel := errors.New("boom")
	err := fmt.Errorf("password %q rejected: %w", "hunter2-canary", sentinel)
	red := RedactError(err, []string{"hunter2-canary"})
	if strings.Contains(red.Error(), "hunter2") || !strings.Contains(red.Error(), Redacted) {
		t.Fatalf("not redacted: %v", red)
	}
	if !errors.Is(red, sentinel) {
		t.Error("the redacted error no longer unwraps")
	}
	if RedactError(sentinel, []string{"hunter2-canary"}) != sentinel || RedactError(nil, []string{"x"}) != nil {
		t.Error("an error without secrets must come back as it is")
	}
}
