package certs

import (
	"crypto/x509"
	"testing"
	"time"
)

func TestIssueVerifyRoundTrip(t *testing.T) {
	now := time.Now()
	ca, err := NewCA(Spec{CommonName: "ca", NotBefore: now, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := NewLeaf(ca, Spec{CommonName: "svc", DNSNames: []string{"svc.ns.svc"}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore: now, Lifetime: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "svc.ns.svc", CurrentTime: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.IsCA || leaf.Cert.IsCA || !leaf.Cert.NotAfter.Equal(now.Add(30*time.Minute).Truncate(time.Second)) && leaf.Cert.NotAfter.Sub(now) > 30*time.Minute {
		t.Errorf("CA flags or lifetime wrong: %v %v %v", ca.Cert.IsCA, leaf.Cert.IsCA, leaf.Cert.NotAfter)
	}
	keyPEM, err := KeyPEM(leaf.Key)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := ParseCert(CertPEM(leaf.Cert)); err != nil || !c.Equal(leaf.Cert) {
		t.Errorf("certificate round trip: %v", err)
	}
	if _, err := ParseKey(keyPEM); err != nil {
		t.Errorf("key round trip: %v", err)
	}
	if _, err := ParseCert([]byte("junk")); err == nil {
		t.Error("junk parsed as a certificate")
	}
	if _, err := ParseKey([]byte("junk")); err == nil {
		t.Error("junk parsed as a key")
	}
}
