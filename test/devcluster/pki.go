package devcluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/certs"
)

// certLifetime is long enough for any dev or test cluster.
const certLifetime = 5 * 365 * 24 * time.Hour

// pki names the files of the cluster's PKI inside the state directory.
type pki struct{ dir string }

func (p pki) path(name string) string { return filepath.Join(p.dir, "pki", name) }

// leaf is one certificate signed by the cluster CA, stored as <name>.crt/.key.
type leaf struct {
	name string
	spec certs.Spec
}

var (
	serverAuth = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	clientAuth = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
)

func leaves(serviceIP net.IP) []leaf {
	return []leaf{
		{"apiserver", certs.Spec{CommonName: "kube-apiserver", Usages: serverAuth,
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPs:      []net.IP{net.IPv4(127, 0, 0, 1), serviceIP}}},
		{"admin", certs.Spec{CommonName: "chartkeeper-admin", Organizations: []string{"system:masters"}, Usages: clientAuth}},
		{"controller-manager", certs.Spec{CommonName: "system:kube-controller-manager", Usages: clientAuth}},
		{"scheduler", certs.Spec{CommonName: "system:kube-scheduler", Usages: clientAuth}},
		{"kwok", certs.Spec{CommonName: "kwok-controller", Organizations: []string{"system:masters"}, Usages: clientAuth}},
	}
}

// generate writes the CA, the leaf certificates and the service-account key
// pair unless they already exist; an existing PKI is reused as it is.
func (p pki) generate(serviceIP net.IP) error {
	if _, err := os.Stat(p.path("ca.crt")); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(p.dir, "pki"), 0o700); err != nil {
		return err
	}
	notBefore := time.Now().Add(-time.Hour)
	ca, err := certs.NewCA(certs.Spec{CommonName: "chartkeeper-dev-ca", NotBefore: notBefore, Lifetime: certLifetime})
	if err != nil {
		return err
	}
	for _, l := range leaves(serviceIP) {
		l.spec.NotBefore, l.spec.Lifetime = notBefore, certLifetime
		pair, err := certs.NewLeaf(ca, l.spec)
		if err != nil {
			return fmt.Errorf("certificate %s: %w", l.name, err)
		}
		if err := p.writePair(l.name, pair); err != nil {
			return err
		}
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saPEM, err := certs.KeyPEM(saKey)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := os.WriteFile(p.path("sa.key"), saPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(p.path("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return err
	}
	// The CA last: ca.crt marks a complete PKI.
	return p.writePair("ca", ca)
}

func (p pki) writePair(name string, pair certs.Pair) error {
	key, err := certs.KeyPEM(pair.Key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p.path(name+".key"), key, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.path(name+".crt"), certs.CertPEM(pair.Cert), 0o644)
}

// readFile returns a PKI file's bytes, naming the file on error.
func (p pki) readFile(name string) ([]byte, error) {
	b, err := os.ReadFile(p.path(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("PKI file %s is missing: remove %s and run up again", name, p.dir)
	}
	return b, err
}
