package helm

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// Release storage is not a forgery channel. Whoever may write Secrets in a
// release namespace can rewrite a stored revision; the operator acts on
// what a revision stores (drift correction re-creates its objects, an
// upgrade or rollback deletes those the next revision drops, an uninstall
// deletes them all). So every revision written through the storage is
// signed: an HMAC-SHA256, under a key only the operator holds, over what
// the operator acts on (see signedContent), stored as the label
// LabelSignature. Every revision read back is checked: one whose signature
// does not match is refused (*ForgedError), and no action reads it. A
// revision without a signature (made before signing, or by another tool
// such as a person's helm upgrade) is returned as it is: the release
// engine never trusts its manifest (docs/release-engine.md, Stored
// revisions are signed).

// LabelSignature holds a revision's signature: "<version>-<MAC>", the MAC
// in hex, 56 digits (224 bits of HMAC-SHA256), within a label value's 63
// characters. Helm copies a revision's labels into the next one (a
// person's helm upgrade): a signature naming another version was copied,
// and the revision counts as unsigned; one naming its own version that
// does not match was changed in place, and the revision is forged.
const LabelSignature = "chartkeeper.dev/signature"

// LabelUnsigned marks, in memory, a revision read without a signature, so
// that rewriting it (Helm marks it superseded or failed) does not sign what
// the operator never wrote; a new revision (Create) is signed whatever the
// revision its labels were copied from. Stored with such a rewrite, it
// still only says "unsigned".
const LabelUnsigned = "chartkeeper.dev/unsigned"

// signatureLen is how many hex digits of the MAC the label keeps.
const signatureLen = 56

// SigningKey is the operator's key for the signatures of stored revisions.
type SigningKey []byte

// MinSigningKey is the shortest key accepted (bytes).
const MinSigningKey = 32

// ForgedError: a stored revision's signature does not match its content:
// it was changed (or written) by someone other than the operator.
type ForgedError struct {
	Release, Namespace string
	Version            int
}

func (e *ForgedError) Error() string {
	return fmt.Sprintf("revision %d of release %s/%s was not written by chartkeeper: its signature (label %s) does not match its stored manifest, hooks, values or chart; it is left alone",
		e.Version, e.Namespace, e.Release, LabelSignature)
}

// IsForged returns the *ForgedError in err's chain, if any.
func IsForged(err error) (*ForgedError, bool) {
	var fe *ForgedError
	ok := errors.As(err, &fe)
	return fe, ok
}

// Signed reports whether the revision carries a signature (its labels say
// so; whether it matches is checked when the revision is decoded).
func (r Revision) Signed() bool {
	v, ok := signedVersion(r.Labels[LabelSignature])
	return ok && v == r.Version && r.Labels[LabelUnsigned] != "true"
}

// signedVersion is the version a signature label names.
func signedVersion(label string) (int, bool) {
	v, _, ok := strings.Cut(label, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// SignWith makes the release storage sign every revision written and
// check every revision read with key (call it before the first action).
func (c *Client) SignWith(key SigningKey) error {
	if len(key) < MinSigningKey {
		return fmt.Errorf("release signing key of %d bytes: at least %d are needed", len(key), MinSigningKey)
	}
	c.key = key
	return nil
}

// signingDriver signs the revisions written through it and checks those
// read through it (see LabelSignature).
type signingDriver struct {
	driver.Driver
	key SigningKey
}

func (d signingDriver) Create(key string, rls *release.Release) error {
	if err := d.sign(rls, true); err != nil {
		return err
	}
	return d.Driver.Create(key, rls)
}

// Update signs again: Helm rewrites a revision's status (superseded,
// failed) and description after it was created.
func (d signingDriver) Update(key string, rls *release.Release) error {
	if err := d.sign(rls, false); err != nil {
		return err
	}
	return d.Driver.Update(key, rls)
}

func (d signingDriver) Get(key string) (*release.Release, error) {
	rls, err := d.Driver.Get(key)
	if err != nil {
		return nil, err
	}
	if err := d.verify(rls); err != nil {
		return nil, err
	}
	return rls, nil
}

func (d signingDriver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	rs, err := d.Driver.List(filter)
	if err != nil {
		return nil, err
	}
	return rs, d.verifyAll(rs)
}

func (d signingDriver) Query(labels map[string]string) ([]*release.Release, error) {
	rs, err := d.Driver.Query(labels)
	if err != nil {
		return rs, err
	}
	return rs, d.verifyAll(rs)
}

func (d signingDriver) verifyAll(rs []*release.Release) error {
	for _, r := range rs {
		if err := d.verify(r); err != nil {
			return err
		}
	}
	return nil
}

// sign sets the revision's signature in a copy of its labels (Helm shares
// label maps between revisions). A rewrite of a revision read unsigned
// stays unsigned (LabelUnsigned).
func (d signingDriver) sign(rls *release.Release, created bool) error {
	if rls == nil {
		return nil
	}
	labels := maps.Clone(rls.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	delete(labels, LabelSignature)
	rls.Labels = labels
	if !created && labels[LabelUnsigned] == "true" {
		return nil
	}
	delete(labels, LabelUnsigned)
	sig, err := signature(d.key, rls)
	if err != nil {
		return fmt.Errorf("signing revision %d of release %s: %w", rls.Version, rls.Name, err)
	}
	labels[LabelSignature] = sig
	return nil
}

// verify checks a signed revision; an unsigned one passes, marked
// LabelUnsigned (see LabelSignature).
func (d signingDriver) verify(rls *release.Release) error {
	if rls == nil {
		return nil
	}
	got := rls.Labels[LabelSignature]
	if v, ok := signedVersion(got); !ok || v != rls.Version { // none, or copied from another revision
		labels := maps.Clone(rls.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[LabelUnsigned] = "true"
		rls.Labels = labels
		return nil
	}
	want, err := signature(d.key, rls)
	if err != nil || !hmac.Equal([]byte(got), []byte(want)) {
		return &ForgedError{Release: rls.Name, Namespace: rls.Namespace, Version: rls.Version}
	}
	return nil
}

// signature is the MAC of a revision's signed content under key.
func signature(key SigningKey, rls *release.Release) (string, error) {
	b, err := signedContent(rls)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return strconv.Itoa(rls.Version) + "-" + hex.EncodeToString(m.Sum(nil))[:signatureLen], nil
}

// signedRevision is what a signature covers: what the operator applies,
// deletes or proves a revision by. Not covered: its status and description,
// which any Helm client rewrites in place (a person's helm upgrade marks
// the previous revision superseded: that must not make it forged; a
// status only chooses among revisions whose content is signed), times
// (hooks' last runs too), the chart's files other than its templates and
// values, and labels not chartkeeper's (a person's helm --labels).
type signedRevision struct {
	Name, Namespace string
	Version         int
	Manifest        string
	Hooks           []signedHook
	Config          json.RawMessage
	Chart           signedChart
	Labels          map[string]string
}

type signedHook struct {
	Name, Kind, Path, Manifest string
	Events                     []release.HookEvent
	Weight                     int
	DeletePolicies             []release.HookDeletePolicy
	OutputLogPolicies          []release.HookOutputLogPolicy
}

type signedChart struct {
	Name, Version, AppVersion string
	// Templates: "name sha256(data)", sorted.
	Templates []string
	Values    json.RawMessage
}

// signedContent encodes a revision's signed content, the same for the
// revision as written and as decoded again (values compared as Helm
// stores them, JSON: see CanonicalValues).
func signedContent(rls *release.Release) ([]byte, error) {
	s := signedRevision{Name: rls.Name, Namespace: rls.Namespace, Version: rls.Version, Manifest: rls.Manifest}
	for _, h := range rls.Hooks {
		if h == nil {
			continue
		}
		s.Hooks = append(s.Hooks, signedHook{Name: h.Name, Kind: h.Kind, Path: h.Path, Manifest: h.Manifest,
			Events: nilIfEmpty(h.Events), Weight: h.Weight, DeletePolicies: nilIfEmpty(h.DeletePolicies),
			OutputLogPolicies: nilIfEmpty(h.OutputLogPolicies)})
	}
	var err error
	if s.Config, err = CanonicalValues(rls.Config); err != nil {
		return nil, err
	}
	if ch := rls.Chart; ch != nil {
		if ch.Metadata != nil {
			s.Chart.Name, s.Chart.Version, s.Chart.AppVersion = ch.Metadata.Name, ch.Metadata.Version, ch.Metadata.AppVersion
		}
		for _, f := range ch.Templates {
			if f != nil {
				sum := sha256.Sum256(f.Data)
				s.Chart.Templates = append(s.Chart.Templates, f.Name+" "+hex.EncodeToString(sum[:]))
			}
		}
		sort.Strings(s.Chart.Templates)
		if s.Chart.Values, err = CanonicalValues(ch.Values); err != nil {
			return nil, err
		}
	}
	s.Labels = map[string]string{}
	for k, v := range rls.Labels {
		if strings.HasPrefix(k, labelDomain) && k != LabelSignature && k != LabelUnsigned {
			s.Labels[k] = v
		}
	}
	return json.Marshal(s)
}

// nilIfEmpty encodes an empty list as a missing one: Helm makes a hook's
// lists empty, not nil (releaseutil.SortManifests), and stores them
// omitempty, so that one without output log policies reads back with nil.
func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// labelDomain prefixes chartkeeper's labels (LabelMadeBy, the digest, ...).
const labelDomain = "chartkeeper.dev/"

// CanonicalValues encodes values as they read back from storage (what
// the signature covers, and what provenance compares): JSON
// decoded into generic maps (numbers become float64), encoded again with
// sorted keys; an empty map as {}.
func CanonicalValues(v map[string]any) (json.RawMessage, error) {
	if len(v) == 0 {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// signed wraps a storage's driver in the signing driver when a key is set.
func (c *Client) signed(st *storage.Storage) *storage.Storage {
	if c.key != nil {
		st.Driver = signingDriver{Driver: st.Driver, key: c.key}
	}
	return st
}
