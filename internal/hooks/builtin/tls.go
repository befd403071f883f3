package builtin

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"

	"github.com/chartkeeper/chartkeeper/internal/certs"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// TLS keeps a CA and certificates for a release in Secrets owned by the
// custom resource: a serving certificate for the release's Service DNS
// names, and optionally peer and client certificates. Certificates are
// renewed once RenewAt of their lifetime has passed (default 2/3), by the
// request's clock; the CA survives renewals. The values get
//
//	<ValuesKey>: {caSecret, serverSecret[, peerSecret][, clientSecret], checksum}
//
// and the checksum changes with every renewal, so the release rolls.
type TLS struct {
	// DNSNames returns the names the server and peer certificates cover.
	// Default: <release>, <release>.<ns>, <release>.<ns>.svc,
	// <release>.<ns>.svc.cluster.local, and the same for *.<release>-headless
	// when Peer is set.
	DNSNames func(req hooks.Request) []string
	// Peer and Client add a peer certificate (server and client use) and a
	// client certificate.
	Peer, Client bool
	// CALifetime defaults to 10 years, Lifetime (leaf certificates) to 90 days.
	CALifetime, Lifetime time.Duration
	// RenewAt is the fraction of a certificate's lifetime after which it is
	// renewed. Default 2/3.
	RenewAt float64
	// ValuesKey is the top-level values key filled in. Default "tls".
	ValuesKey string
}

// The phases TLS implements, checked at compile time: hooks.Hook.Impl is
// an any, so a method whose signature drifted from its interface would
// otherwise be silently skipped.
var (
	_ hooks.Translator  = (*TLS)(nil)
	_ hooks.PostRelease = (*TLS)(nil)
)

func (t *TLS) defaults() TLS {
	d := *t
	if d.CALifetime <= 0 {
		d.CALifetime = 10 * 365 * 24 * time.Hour
	}
	if d.Lifetime <= 0 {
		d.Lifetime = 90 * 24 * time.Hour
	}
	if d.RenewAt <= 0 || d.RenewAt >= 1 {
		d.RenewAt = 2.0 / 3.0
	}
	if d.ValuesKey == "" {
		d.ValuesKey = "tls"
	}
	if d.DNSNames == nil {
		peer := d.Peer
		d.DNSNames = func(req hooks.Request) []string {
			rel, ns := req.ReleaseName, req.ReleaseNamespace
			names := serviceNames(rel, ns)
			if peer {
				names = append(names, serviceNames("*."+rel+"-headless", ns)...)
			}
			return names
		}
	}
	return d
}

func serviceNames(svc, ns string) []string {
	return []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}
}

type leafKind struct {
	name   string
	usages []x509.ExtKeyUsage
	dns    bool
}

func (t TLS) leaves() []leafKind {
	out := []leafKind{{name: "server", usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, dns: true}}
	if t.Peer {
		out = append(out, leafKind{name: "peer", usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, dns: true})
	}
	if t.Client {
		out = append(out, leafKind{name: "client", usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	}
	return out
}

// Translate implements Translator.
func (t *TLS) Translate(ctx context.Context, req hooks.Request, vals chartutil.Values) (chartutil.Values, error) {
	cfg := t.defaults()
	now := req.Now()
	ca, err := cfg.ensureCA(ctx, req, now)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"caSecret": req.ReleaseName + "-ca"}
	certs := map[string][]byte{}
	for _, lk := range cfg.leaves() {
		name := fmt.Sprintf("%s-tls-%s", req.ReleaseName, lk.name)
		crt, err := cfg.ensureLeaf(ctx, req, name, lk, ca, now)
		if err != nil {
			return nil, err
		}
		out[lk.name+"Secret"] = name
		certs[lk.name] = crt
	}
	out["checksum"] = checksum(certs)
	setValue(vals, cfg.ValuesKey, out)
	return vals, nil
}

// PostRelease implements PostRelease: it asks for a reconcile when the
// first certificate is due for renewal, so renewal happens on time.
func (t *TLS) PostRelease(ctx context.Context, req hooks.Request, _ hooks.Release) (hooks.Result, error) {
	cfg := t.defaults()
	var next time.Time
	for _, lk := range cfg.leaves() {
		sec, found, err := getSecret(ctx, req.Client, req.ReleaseNamespace, fmt.Sprintf("%s-tls-%s", req.ReleaseName, lk.name))
		if err != nil || !found {
			return hooks.Result{}, err
		}
		crt, err := certs.ParseCert(sec.Data[corev1.TLSCertKey])
		if err != nil {
			return hooks.Result{}, nil // Translate replaces it on the next reconcile
		}
		due := cfg.renewalTime(crt)
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	wait := next.Sub(req.Now())
	if wait < time.Second {
		wait = time.Second
	}
	return hooks.Result{RequeueAfter: wait}, nil
}

func (t TLS) renewalTime(c *x509.Certificate) time.Time {
	life := c.NotAfter.Sub(c.NotBefore)
	return c.NotBefore.Add(time.Duration(float64(life) * t.RenewAt))
}

func (t TLS) ensureCA(ctx context.Context, req hooks.Request, now time.Time) (certs.Pair, error) {
	name := req.ReleaseName + "-ca"
	sec, found, err := getSecret(ctx, req.Client, req.ReleaseNamespace, name)
	if err != nil {
		return certs.Pair{}, err
	}
	if found {
		crt, err1 := certs.ParseCert(sec.Data["ca.crt"])
		key, err2 := certs.ParseKey(sec.Data["ca.key"])
		if err1 == nil && err2 == nil && now.Before(crt.NotAfter) {
			return certs.Pair{Cert: crt, Key: key}, nil
		}
		return certs.Pair{}, fmt.Errorf("CA Secret %s is unusable or expired; delete it to issue a new CA", name)
	}
	ca, err := certs.NewCA(certs.Spec{CommonName: req.ReleaseName + " CA", NotBefore: now.Add(-time.Minute), Lifetime: t.CALifetime})
	if err != nil {
		return certs.Pair{}, err
	}
	s := ownedSecret(req.Object, req.ReleaseNamespace, name, corev1.SecretTypeOpaque)
	s.Data["ca.crt"] = certs.CertPEM(ca.Cert)
	if s.Data["ca.key"], err = certs.KeyPEM(ca.Key); err != nil {
		return certs.Pair{}, err
	}
	if err := req.Client.Create(ctx, s); err != nil {
		return certs.Pair{}, fmt.Errorf("creating CA Secret %s: %w", name, err)
	}
	req.Log.Info("created CA", "secret", name)
	return ca, nil
}

func (t TLS) ensureLeaf(ctx context.Context, req hooks.Request, name string, lk leafKind, ca certs.Pair, now time.Time) ([]byte, error) {
	var dns []string
	if lk.dns {
		dns = t.DNSNames(req)
	}
	sec, found, err := getSecret(ctx, req.Client, req.ReleaseNamespace, name)
	if err != nil {
		return nil, err
	}
	if found {
		if crt, err := certs.ParseCert(sec.Data[corev1.TLSCertKey]); err == nil && crt.CheckSignatureFrom(ca.Cert) == nil &&
			now.Before(t.renewalTime(crt)) && slices.Equal(crt.DNSNames, dns) {
			return sec.Data[corev1.TLSCertKey], nil
		}
	}
	pair, err := certs.NewLeaf(ca, certs.Spec{CommonName: req.ReleaseName + "-" + lk.name, DNSNames: dns, Usages: lk.usages,
		NotBefore: now, Lifetime: t.Lifetime})
	if err != nil {
		return nil, err
	}
	keyPEM, err := certs.KeyPEM(pair.Key)
	if err != nil {
		return nil, err
	}
	if !found {
		sec = ownedSecret(req.Object, req.ReleaseNamespace, name, corev1.SecretTypeTLS)
	}
	sec.Data = map[string][]byte{corev1.TLSCertKey: certs.CertPEM(pair.Cert), corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": certs.CertPEM(ca.Cert)}
	if found {
		err = req.Client.Update(ctx, sec)
	} else {
		err = req.Client.Create(ctx, sec)
	}
	if err != nil {
		return nil, fmt.Errorf("writing certificate Secret %s: %w", name, err)
	}
	req.Log.Info("issued certificate", "secret", name, "notAfter", pair.Cert.NotAfter)
	return sec.Data[corev1.TLSCertKey], nil
}
