// Package certs issues X.509 certificates with Go's crypto/x509: a
// self-signed CA and leaf certificates signed by it (ECDSA P-256), and their
// PEM encoding. The local cluster's PKI and the TLS hook both use it.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"time"
)

// Spec describes a certificate to issue.
type Spec struct {
	CommonName    string
	Organizations []string
	DNSNames      []string
	IPs           []net.IP
	// Usages of a leaf certificate (server and/or client authentication).
	Usages    []x509.ExtKeyUsage
	NotBefore time.Time
	Lifetime  time.Duration
}

// Pair is an issued certificate and its private key.
type Pair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA issues a self-signed CA.
func NewCA(s Spec) (Pair, error) {
	tmpl := s.template()
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	return issue(tmpl, nil)
}

// NewLeaf issues a certificate signed by ca.
func NewLeaf(ca Pair, s Spec) (Pair, error) {
	tmpl := s.template()
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.ExtKeyUsage = s.Usages
	return issue(tmpl, &ca)
}

func (s Spec) template() *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.CommonName, Organization: s.Organizations},
		NotBefore:    s.NotBefore,
		NotAfter:     s.NotBefore.Add(s.Lifetime),
		DNSNames:     s.DNSNames,
		IPAddresses:  s.IPs,
	}
}

func issue(tmpl *x509.Certificate, parent *Pair) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return Pair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, err
	}
	return Pair{Cert: cert, Key: key}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// CertPEM encodes a certificate.
func CertPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// KeyPEM encodes a private key (PKCS#8).
func KeyPEM(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseCert decodes a PEM certificate.
func ParseCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

// ParseKey decodes a PEM (PKCS#8) private key.
func ParseKey(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("the key cannot sign")
	}
	return s, nil
}
