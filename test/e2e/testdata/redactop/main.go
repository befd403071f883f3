// Command redactop is chartkeeper with one more app, for redact_test.go: a
// Go hook on the test kind Vault whose PreRelease fails, when the spec asks
// (leakyHook: true), with a message quoting the spec's secrets raw, quoted,
// as JSON and base64-encoded, as a careless hook would. It is built by the
// test only (testdata: never part of ./... or of the product).
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/cli"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

var vault = schema.GroupKind{Group: "test.chartkeeper.dev", Kind: "Vault"}

func init() {
	apps.Register(apps.App{
		Name:  "redacttest",
		Kinds: []schema.GroupKind{vault},
		Hooks: func(schema.GroupKind) []hooks.Hook {
			return []hooks.Hook{{Name: "leaky", Impl: hooks.PreReleaseFunc(leaky)}}
		},
	})
}

func leaky(_ context.Context, req hooks.Request, vals chartutil.Values) (hooks.Result, error) {
	if on, _, _ := unstructured.NestedBool(req.Object.Object, "spec", "leakyHook"); !on {
		return hooks.Result{}, nil
	}
	users, _ := json.Marshal(vals["users"])
	token, _, _ := unstructured.NestedString(req.Object.Object, "spec", "store", "token")
	return hooks.Result{}, fmt.Errorf("users %s rejected; store token %q (base64 %s) rejected",
		users, token, base64.StdEncoding.EncodeToString([]byte(token)))
}

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
