package helm

import (
	"bytes"
	"context"
	"io"
	"testing"

	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/client-go/kubernetes/fake"
)

// A predecessor's revision (unsigned, stored by Helm's Secret driver
// without the signing driver), taken over, reads back signed with the
// labels added and its own kept, its content, status and version as they
// were, and no revision made.
func TestTakeOverSignsInPlace(t *testing.T) {
	ctx := context.Background()
	secrets := fake.NewClientset().CoreV1().Secrets("team")
	plain := newStorage(secrets, StorageSecret, t.Logf)
	rel := signedRelease(2, release.StatusDeployed)
	rel.Labels = map[string]string{"team": "ops"} // a predecessor's: none of chartkeeper's
	if err := plain.Create(rel); err != nil {
		t.Fatal(err)
	}
	st := newStorage(secrets, StorageSecret, t.Logf)
	st.Driver = signingDriver{Driver: st.Driver, key: SigningKey(bytes.Repeat([]byte{5}, MinSigningKey))}
	hc := NewOffline(st, &kubefake.PrintingKubeClient{Out: io.Discard})

	got, err := hc.Get(ctx, "web", "team", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[LabelUnsigned] != "true" {
		t.Fatalf("a predecessor's revision read back %v: want it marked unsigned", got.Labels)
	}
	if err := hc.TakeOver(ctx, got, map[string]string{"chartkeeper.dev/managed": "true", "chartkeeper.dev/owner-uid": "uid-web"}); err != nil {
		t.Fatal(err)
	}
	after, err := hc.Get(ctx, "web", "team", 0)
	if err != nil {
		t.Fatalf("the revision taken over does not read back: %v", err)
	}
	if after.Version != 2 || after.Info.Status != release.StatusDeployed || after.Manifest != rel.Manifest {
		t.Errorf("revision %d %s after the takeover: want revision 2 deployed, as stored", after.Version, after.Info.Status)
	}
	rev := Revision{Version: after.Version, Labels: after.Labels}
	if !rev.Signed() {
		t.Errorf("labels %v: want the revision signed", after.Labels)
	}
	for k, want := range map[string]string{"team": "ops", "chartkeeper.dev/managed": "true", "chartkeeper.dev/owner-uid": "uid-web", LabelUnsigned: ""} {
		if after.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, after.Labels[k], want)
		}
	}
	hist, err := hc.History(ctx, "web", "team")
	if err != nil || len(hist) != 1 {
		t.Errorf("history %d revisions (%v): want the one taken over", len(hist), err)
	}
}
