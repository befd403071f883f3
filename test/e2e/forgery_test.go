package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A tenant who may write Secrets in the release namespace rewrites a
// stored revision so that it names objects in another namespace: one that
// exists there (to be changed, or deleted at uninstall) and one that does
// not (to be created). One forger keeps the signature label, the other
// removes it. After a restart (which empties the operator's memory of the
// revision) nothing outside the release namespace is created, changed or
// deleted, by drift correction or by the uninstall of the deleted
// resource; each resource is Stalled with ReleaseForged naming the
// revision, and its deletion does not hang.
func TestForgedReleaseSecretTouchesNothingOutside(t *testing.T) {
	parallel(t, 40*time.Second)
	env, ns, op := appFixture(t, testWatches())
	other := env.Namespace(t)
	ctx := context.Background()
	victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "victim"}, Data: map[string]string{"data": "original"}}
	if err := env.Client.Create(ctx, victim); err != nil {
		t.Fatal(err)
	}
	names := []string{"forged", "stripped"}
	for _, name := range names {
		if err := env.Client.Create(ctx, newApp(ns, name, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		waitReady(t, env, ns, name, 1)
	}
	if err := op.interrupt(t, 30*time.Second); err != nil {
		t.Logf("first operator: %v", err)
	}
	forgeRevision(t, env, ns, "forged", other, false)
	forgeRevision(t, env, ns, "stripped", other, true)
	startConfined(t, env, ns, testWatches(), "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteApps(t, env, ns) }) // while the second operator runs

	// Not fatal: what the deletion does to the other namespace is checked
	// whatever the conditions say.
	for _, name := range names {
		if err := within(time.Minute, func(ctx context.Context) error {
			_, st, err := getApp(ctx, env, ns, name)
			if err != nil {
				return err
			}
			c := condition(st, api.ConditionStalled)
			if c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonReleaseForged) || !strings.Contains(c.Message, "revision 1") {
				return fmt.Errorf("%s: not Stalled ReleaseForged naming revision 1: %+v", name, st.Conditions)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
	untouched := func(when string) {
		t.Helper()
		got := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: other, Name: "victim"}, got); err != nil {
			t.Fatalf("%s: the ConfigMap in another namespace: %v", when, err)
		}
		if got.ResourceVersion != victim.ResourceVersion || got.Data["data"] != "original" {
			t.Errorf("%s: the ConfigMap in another namespace was changed: data %q, resourceVersion %s (was %s)",
				when, got.Data["data"], got.ResourceVersion, victim.ResourceVersion)
		}
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: other, Name: "planted"}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s: the forged revision's ConfigMap was created in another namespace (%v)", when, err)
		}
	}
	untouched("forgery found")
	if err := within(30*time.Second, func(ctx context.Context) error {
		for _, m := range eventMessages(ctx, t, env, ns, "forged") {
			if strings.Contains(m, "revision 1") && strings.Contains(m, "signature") {
				return nil
			}
		}
		return fmt.Errorf("no Event names the forged revision: %q", eventMessages(ctx, t, env, ns, "forged"))
	}); err != nil {
		t.Error(err)
	}

	for _, name := range names {
		if err := env.Client.Delete(ctx, newApp(ns, name, nil)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		waitGone(t, env, appGVK, ns, name, time.Minute)
	}
	untouched("after deletion")
}

// forgeRevision rewrites revision 1 of release name as a tenant with write
// access to the namespace's Secrets would: its manifest gains a ConfigMap
// "victim" (which exists) and one "planted" (which does not), both in
// namespace other; values and chart stay as they were. strip also removes
// the signature label.
func forgeRevision(t *testing.T, env *testenv.Env, ns, name, other string, strip bool) {
	t.Helper()
	ctx := context.Background()
	sec := &corev1.Secret{}
	key := types.NamespacedName{Namespace: ns, Name: "sh.helm.release.v1." + name + ".v1"}
	if err := env.Client.Get(ctx, key, sec); err != nil {
		t.Fatal(err)
	}
	rel := decodeStoredRelease(t, sec.Data["release"])
	for _, cm := range []string{"victim", "planted"} {
		rel["manifest"] = rel["manifest"].(string) + fmt.Sprintf(
			"\n---\n# Source: app/templates/extra.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  data: forged\n", cm, other)
	}
	sec.Data["release"] = encodeStoredRelease(t, rel)
	if strip {
		delete(sec.Labels, "chartkeeper.dev/signature")
	}
	if err := env.Client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
}

// decodeStoredRelease decodes a release as Helm's Secret driver stores it
// (base64 of gzipped JSON), into a generic map that keeps every field.
func decodeStoredRelease(t *testing.T, data []byte) map[string]any {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var rel map[string]any
	if err := json.Unmarshal(raw, &rel); err != nil {
		t.Fatal(err)
	}
	return rel
}

// encodeStoredRelease is decodeStoredRelease's inverse.
func encodeStoredRelease(t *testing.T, rel map[string]any) []byte {
	t.Helper()
	raw, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// within polls check (every half second) until it returns nil or d has
// passed, and returns its last error.
func within(d time.Duration, check func(context.Context) error) error {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := check(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}
