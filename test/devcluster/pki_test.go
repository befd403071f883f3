package devcluster

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"testing"
)

func readCert(t *testing.T, p pki, name string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(p.path(name))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", name)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPKIChainsAndNames(t *testing.T) {
	p := pki{dir: t.TempDir()}
	if err := p.generate(net.ParseIP("10.96.0.1")); err != nil {
		t.Fatal(err)
	}
	ca := readCert(t, p, "ca.crt")
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	srv := readCert(t, p, "apiserver.crt")
	for _, name := range []string{"localhost", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("apiserver certificate does not verify for %s: %v", name, err)
		}
	}
	for _, ip := range []string{"127.0.0.1", "10.96.0.1"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: ip}); err != nil {
			t.Errorf("apiserver certificate does not verify for %s: %v", ip, err)
		}
	}
	clients := map[string]struct{ cn, org string }{
		"admin.crt":              {"chartkeeper-admin", "system:masters"},
		"controller-manager.crt": {"system:kube-controller-manager", ""},
		"scheduler.crt":          {"system:kube-scheduler", ""},
	}
	for file, want := range clients {
		c := readCert(t, p, file)
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s is not a client certificate of the CA: %v", file, err)
		}
		if c.Subject.CommonName != want.cn || (want.org != "" && (len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != want.org)) {
			t.Errorf("%s subject %v, want CN=%s O=%s", file, c.Subject, want.cn, want.org)
		}
	}
	for _, f := range []string{"ca.key", "sa.key", "admin.key"} {
		st, err := os.Stat(p.path(f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: want mode 0600, got %v (%v)", f, st.Mode().Perm(), err)
		}
	}
}

func TestPKIIsReused(t *testing.T) {
	p := pki{dir: t.TempDir()}
	if err := p.generate(net.ParseIP("10.96.0.1")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p.path("ca.crt"))
	if err := p.generate(net.ParseIP("10.96.0.1")); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p.path("ca.crt"))
	if !bytes.Equal(before, after) {
		t.Error("a second generate replaced the CA")
	}
}
