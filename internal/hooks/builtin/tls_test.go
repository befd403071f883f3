package builtin_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/builtin"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func cert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("no PEM")
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTLSCertificatesVerifyAndRenew(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	clk := clocktesting.NewFakeClock(time.Now())
	req := owner(t, env, ns, "etcd", clk.Now)
	h := &builtin.TLS{Peer: true, Client: true, Lifetime: 90 * 24 * time.Hour}
	ctx := context.Background()

	vals, err := h.Translate(ctx, req, chartutil.Values{})
	if err != nil {
		t.Fatal(err)
	}
	v := vals["tls"].(map[string]any)
	if v["serverSecret"] != "etcd-tls-server" || v["peerSecret"] != "etcd-tls-peer" || v["clientSecret"] != "etcd-tls-client" || v["caSecret"] != "etcd-ca" {
		t.Fatalf("values %v", v)
	}
	caSec := secret(t, env, ns, "etcd-ca")
	roots := x509.NewCertPool()
	roots.AddCert(cert(t, caSec.Data["ca.crt"]))
	server := secret(t, env, ns, "etcd-tls-server")
	srv := cert(t, server.Data["tls.crt"])
	for _, name := range []string{"etcd", "etcd." + ns + ".svc", "etcd." + ns + ".svc.cluster.local"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: clk.Now()}); err != nil {
			t.Errorf("server certificate for %s: %v", name, err)
		}
	}
	peer := cert(t, secret(t, env, ns, "etcd-tls-peer").Data["tls.crt"])
	if _, err := peer.Verify(x509.VerifyOptions{Roots: roots, DNSName: "etcd-0.etcd-headless." + ns + ".svc", CurrentTime: clk.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("peer certificate: %v", err)
	}
	client := cert(t, secret(t, env, ns, "etcd-tls-client").Data["tls.crt"])
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: clk.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if res, err := h.PostRelease(ctx, req, hooks.Release{}); err != nil || res.RequeueAfter < 59*24*time.Hour || res.RequeueAfter > 61*24*time.Hour {
		t.Errorf("next renewal check in %s (%v), want about 60 days", res.RequeueAfter, err)
	}

	// Before 2/3 of the lifetime: nothing changes.
	clk.Step(59 * 24 * time.Hour)
	vals, err = h.Translate(ctx, req, chartutil.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if vals["tls"].(map[string]any)["checksum"] != v["checksum"] || !bytes.Equal(secret(t, env, ns, "etcd-tls-server").Data["tls.crt"], server.Data["tls.crt"]) {
		t.Error("renewed before 2/3 of the lifetime")
	}
	// Past 2/3: renewed, the CA kept, the checksum changed (the release rolls).
	clk.Step(2 * 24 * time.Hour)
	vals, err = h.Translate(ctx, req, chartutil.Values{})
	if err != nil {
		t.Fatal(err)
	}
	renewed := cert(t, secret(t, env, ns, "etcd-tls-server").Data["tls.crt"])
	if renewed.SerialNumber.Cmp(srv.SerialNumber) == 0 || !renewed.NotBefore.After(srv.NotBefore) {
		t.Error("the server certificate was not renewed")
	}
	if !bytes.Equal(secret(t, env, ns, "etcd-ca").Data["ca.crt"], caSec.Data["ca.crt"]) {
		t.Error("the CA changed on renewal")
	}
	if _, err := renewed.Verify(x509.VerifyOptions{Roots: roots, DNSName: "etcd." + ns + ".svc", CurrentTime: clk.Now()}); err != nil {
		t.Errorf("renewed certificate does not verify against the same CA: %v", err)
	}
	if vals["tls"].(map[string]any)["checksum"] == v["checksum"] {
		t.Error("the checksum did not change: the release would not roll")
	}
}
