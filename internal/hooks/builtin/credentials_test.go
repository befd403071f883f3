package builtin_test

import (
	"bytes"
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/builtin"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func TestCredentialsCreatedOnceAndRotated(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	req := owner(t, env, ns, "db", nil)
	h := &builtin.Credentials{Keys: []string{"password", "replication"}}
	ctx := context.Background()

	vals, err := h.Translate(ctx, req, chartutil.Values{"replicas": 3})
	if err != nil {
		t.Fatal(err)
	}
	cred := vals["credentials"].(map[string]any)
	if cred["secretName"] != "db-credentials" || vals["replicas"] != 3 {
		t.Fatalf("values %v", vals)
	}
	first := secret(t, env, ns, "db-credentials")
	if len(first.Data["password"]) < 32 || bytes.Equal(first.Data["password"], first.Data["replication"]) {
		t.Fatalf("weak or repeated credentials: %d bytes", len(first.Data["password"]))
	}
	if refs := first.OwnerReferences; len(refs) != 1 || refs[0].UID != req.Object.GetUID() {
		t.Errorf("not owned by the resource: %v", refs)
	}

	// Another reconcile (an upgrade with a new spec) leaves it byte-identical.
	vals2, err := h.Translate(ctx, req, chartutil.Values{"replicas": 5})
	if err != nil {
		t.Fatal(err)
	}
	again := secret(t, env, ns, "db-credentials")
	if !bytes.Equal(first.Data["password"], again.Data["password"]) || first.ResourceVersion != again.ResourceVersion {
		t.Error("the Secret changed without a rotation request")
	}
	if vals2["credentials"].(map[string]any)["checksum"] != cred["checksum"] {
		t.Error("the checksum changed without a rotation")
	}

	// Rotation: new values, the old kept until the release has rolled.
	req.Object.SetAnnotations(map[string]string{"chartkeeper.dev/rotate-credentials": "2026-11-22"})
	vals3, err := h.Translate(ctx, req, chartutil.Values{})
	if err != nil {
		t.Fatal(err)
	}
	rotated := secret(t, env, ns, "db-credentials")
	if bytes.Equal(rotated.Data["password"], first.Data["password"]) || !bytes.Equal(rotated.Data["previous-password"], first.Data["password"]) {
		t.Fatal("rotation did not replace the password and keep the old one")
	}
	if vals3["credentials"].(map[string]any)["checksum"] == cred["checksum"] {
		t.Error("the checksum did not change with the rotation: the release would not roll")
	}
	// The same request again does not rotate twice.
	if _, err := h.Translate(ctx, req, chartutil.Values{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(secret(t, env, ns, "db-credentials").Data["password"], rotated.Data["password"]) {
		t.Error("one rotation request rotated twice")
	}
	if _, err := h.PostRelease(ctx, req, hooks.Release{Ready: false}); err != nil {
		t.Fatal(err)
	}
	if _, ok := secret(t, env, ns, "db-credentials").Data["previous-password"]; !ok {
		t.Error("previous credentials dropped before the release rolled")
	}
	if _, err := h.PostRelease(ctx, req, hooks.Release{Ready: true}); err != nil {
		t.Fatal(err)
	}
	final := secret(t, env, ns, "db-credentials")
	if _, ok := final.Data["previous-password"]; ok || !bytes.Equal(final.Data["password"], rotated.Data["password"]) {
		t.Error("after the roll: previous not dropped, or the current value changed")
	}
}
