package helm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// createFirst is an install that creates its objects without reading
// them first.
//
// Helm's install GETs every object of the release before it creates any,
// to refuse one that exists and is not the release's (no Helm marks of it)
// and to adopt one that is (left by an earlier release of the same name:
// an object kept with helm.sh/resource-policy: keep). Nearly always the
// answer is "not found": make bench counted 3 GETs per install of a
// three-object release, a quarter of its requests. Here the create itself
// asks: the API server answers AlreadyExists for an object that exists,
// and only that object is read and checked as Helm checks it.
//
//   - Each is Helm's: marked for this release, it is adopted (Helm's update
//     of it); the install goes on.
//   - One is not: the install is refused with Helm's message. What this
//     install created is deleted again (what the chart keeps with
//     helm.sh/resource-policy: keep aside), and Install removes the
//     revision Helm stored, so the cluster and the storage are as Helm's
//     refusal leaves them.
//   - The API server's authorization forbids a create (the identity the
//     release runs as may not make that kind, so Helm's read was refused
//     too): refused the same way, with the API server's words, before any
//     later kind is made. An admission refusal (an exceeded quota) is the
//     install's failure, as in Helm.
//
// Pre-install hooks run before the release's objects are created, and a
// refused install must not run them: the first write that is not the
// release's own create (a hook's, its deletion before creation) first
// reads the release's objects, as Helm would have, and refuses the install
// there on a conflict.
//
// Helm's conflict check reads through each object's REST client, before
// anything is written; the release's objects (the first manifest the
// install builds) get a client that answers "not found" to those reads
// without asking the API server, until the first write. Helm then stores
// the revision pending and creates the objects.
//
// A process killed between that pending record and the refusal leaves a
// pending revision that names an object that is not the release's. Helm
// has the same window between its read and its create (an object made in
// between); there, a create that fails after its read is the one case this
// now checks and Helm does not.
type createFirst struct {
	mu sync.Mutex
	// objects are the release's objects (the first manifest built, once
	// built is set).
	objects kube.ResourceList
	built   bool
	// wrote: the install has begun to write; reads are real from then on.
	wrote bool
	// conflict is the refusal, once one is found.
	conflict error
}

// took takes a manifest the install has built: the first is the
// release's, and its objects' reads answer "not found" until the first
// write.
func (f *createFirst) took(list kube.ResourceList) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.built || f.wrote {
		return
	}
	f.objects, f.built = list, true
	for _, info := range list {
		info.Client = presumedAbsent{RESTClient: info.Client, f: f}
	}
}

// isRelease reports whether list is the release's objects.
func (f *createFirst) isRelease(list kube.ResourceList) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(list) > 0 && len(list) == len(f.objects) && list[0] == f.objects[0]
}

// write marks the install as writing; it returns true the first time.
func (f *createFirst) write() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := !f.wrote
	f.wrote = true
	return first
}

func (f *createFirst) writing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wrote
}

func (f *createFirst) refuse(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conflict == nil {
		f.conflict = err
	}
	return err
}

// refusal is the install's conflict, if one was found.
func (f *createFirst) refusal() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conflict
}

// beforeOtherWrite is called before a write that is not the release's
// create (a hook's): on the first write, the release's objects are read
// and checked, as Helm's install does before anything.
func (f *createFirst) beforeOtherWrite() error {
	if f == nil || !f.write() {
		return nil
	}
	var refusals []error
	for _, info := range f.objects {
		if refused := inspect(info); refused != nil {
			refusals = append(refusals, refused)
		}
	}
	if len(refusals) > 0 {
		return f.refuse(errors.Join(refusals...))
	}
	return nil
}

// inspect reads an object of the release and checks it as Helm's install
// does: it may be adopted (nil) when it is absent or marked for this
// release; otherwise the error says why not (it is another's, or the read
// failed).
func inspect(info *resource.Info) error {
	live, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("could not get information about the resource %s: %w", describe(info), err)
	}
	if err := ownedByRelease(live, info.Object); err != nil {
		return fmt.Errorf("%s exists and cannot be imported into the current release: %w", describe(info), err)
	}
	return nil
}

// create is the release's create: each object is created, in Helm's order
// (one kind after another, the objects of a kind at once); those that
// exist are read and adopted or refused (see createFirst).
//
// What Helm's reads before the create would have stopped, before anything
// was stored, stops it here too, and leaves nothing: an object that is not
// the release's, a read that fails, and a create the API server's
// authorization forbids (the identity the release runs as may not make
// that kind: Helm's read was refused the same way, for the same missing
// rule). What this create made is deleted again, and Install removes the
// revision. Any other failure is Helm's: the objects made stay, the
// revision is failed.
func (c reachedClient) create(resources kube.ResourceList) (*kube.Result, error) {
	c.fresh.write()
	created, existing, forbidden, err := createEach(resources)
	refusals := forbidden
	var adopt kube.ResourceList
	for _, info := range existing {
		// One gone in between is adopted too: Helm's update creates it.
		if refused := inspect(info); refused != nil {
			refusals = append(refusals, refused)
		} else {
			adopt = append(adopt, info)
		}
	}
	if len(refusals) > 0 {
		return &kube.Result{}, c.fresh.refuse(errors.Join(append(refusals, undo(created)...)...))
	}
	c.written(created...)
	if err != nil || len(adopt) == 0 {
		return &kube.Result{Created: created}, err
	}
	// Helm's adoption: its update of each, from the manifest to itself
	// (the updated ones are not told as written: Helm's answer for an
	// empty patch is a read, which may hold someone else's edit).
	res, err := c.Client.Update(adopt, adopt, false)
	out := &kube.Result{Created: created}
	if res != nil {
		c.written(res.Created...)
		out.Created = append(out.Created, res.Created...)
		out.Updated = res.Updated
	}
	return out, err
}

// undo deletes what a refused install created, except what the chart
// keeps (helm.sh/resource-policy: keep: never deleted), and returns the
// failures.
func undo(created kube.ResourceList) []error {
	var failed []error
	policy := metav1.DeletePropagationBackground
	for _, info := range created {
		if isKept(info.Object) {
			continue
		}
		_, err := resource.NewHelper(info.Client, info.Mapping).DeleteWithOptions(info.Namespace, info.Name, &metav1.DeleteOptions{PropagationPolicy: &policy})
		if err != nil && !apierrors.IsNotFound(err) {
			failed = append(failed, fmt.Errorf("deleting %s, created by the refused install: %w", describe(info), err))
		}
	}
	return failed
}

// createEach creates each object in Helm's order and returns those it
// created, those that exist, and the refusals of those the API server
// forbade; err joins every other failure.
func createEach(resources kube.ResourceList) (created, existing kube.ResourceList, forbidden []error, err error) {
	type result struct {
		info *resource.Info
		err  error
	}
	var failed []error
	for start := 0; start < len(resources); {
		end := start + 1
		kind := resources[start].Object.GetObjectKind().GroupVersionKind().Kind
		for end < len(resources) && resources[end].Object.GetObjectKind().GroupVersionKind().Kind == kind {
			end++
		}
		results := make(chan result, end-start)
		for _, info := range resources[start:end] {
			go func() {
				helper := resource.NewHelper(info.Client, info.Mapping).WithFieldManager(kube.ManagedFieldsManager)
				obj, err := helper.Create(info.Namespace, true, info.Object)
				if err == nil {
					err = info.Refresh(obj, true)
				}
				results <- result{info, err}
			}()
		}
		batch := map[*resource.Info]error{}
		for range resources[start:end] {
			r := <-results
			batch[r.info] = r.err
		}
		for _, info := range resources[start:end] { // in the manifest's order
			switch err := batch[info]; {
			case err == nil:
				created = append(created, info)
			case apierrors.IsAlreadyExists(err):
				existing = append(existing, info)
			case unauthorized(err):
				forbidden = append(forbidden, err)
			default:
				failed = append(failed, err)
			}
		}
		if len(forbidden) > 0 {
			break // refused: no later kind is made only to be deleted
		}
		start = end
	}
	return created, existing, forbidden, errors.Join(failed...)
}

// unauthorized reports whether err is an RBAC refusal of the request
// (RBACRefused: "User ... cannot create resource ...", or the escalation
// check of a Role or binding that grants what the user does not hold),
// not an admission refusal with the same code (an exceeded quota, a
// policy): those are the install's failures, as in Helm.
func unauthorized(err error) bool {
	return apierrors.IsForbidden(err) && RBACRefused(err.Error())
}

// ownedByRelease is Helm's check that a live object may be adopted by the
// release desired (an object of its manifest, with Helm's marks): Helm's
// managed-by label and release annotations, with the same values.
func ownedByRelease(live, desired runtime.Object) error {
	l, err1 := meta.Accessor(live)
	d, err2 := meta.Accessor(desired)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	var problems []string
	for _, k := range helmMarks.labels {
		if p := requireMark(l.GetLabels(), k, d.GetLabels()[k]); p != "" {
			problems = append(problems, "label validation error: "+p)
		}
	}
	for _, k := range helmMarks.annotations {
		if p := requireMark(l.GetAnnotations(), k, d.GetAnnotations()[k]); p != "" {
			problems = append(problems, "annotation validation error: "+p)
		}
	}
	if len(problems) > 0 {
		return errors.New("invalid ownership metadata; " + strings.Join(problems, "; "))
	}
	return nil
}

func requireMark(m map[string]string, k, want string) string {
	got, ok := m[k]
	switch {
	case !ok:
		return fmt.Sprintf("missing key %q: must be set to %q", k, want)
	case got != want:
		return fmt.Sprintf("key %q must equal %q: current value is %q", k, want, got)
	}
	return ""
}

// describe names an object as Helm's messages do.
func describe(info *resource.Info) string {
	return fmt.Sprintf("%s %q in namespace %q", info.Mapping.GroupVersionKind.Kind, info.Name, info.Namespace)
}

// isKept reports whether the chart marks obj helm.sh/resource-policy: keep
// (read as Helm reads it: ownership.Kept).
func isKept(obj runtime.Object) bool {
	a, err := meta.Accessor(obj)
	return err == nil && ownership.Kept(a.GetAnnotations())
}

// presumedAbsent is an object's REST client whose reads answer "not found"
// until the install writes (see createFirst).
type presumedAbsent struct {
	resource.RESTClient
	f *createFirst
}

func (p presumedAbsent) Get() *rest.Request {
	if p.f.writing() {
		return p.RESTClient.Get()
	}
	return absent.Get()
}

// absent is a REST client that answers every request 404 Not Found
// without sending it.
var absent = func() *rest.RESTClient {
	c, err := rest.RESTClientForConfigAndClient(&rest.Config{
		Host: "http://presumed-absent.invalid",
		QPS:  -1,
		ContentConfig: rest.ContentConfig{
			GroupVersion:         &schema.GroupVersion{Version: "v1"},
			NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		},
	}, &http.Client{Transport: notFound{}})
	if err != nil {
		panic(err) // a constant configuration
	}
	return c
}()

type notFound struct{}

func (notFound) RoundTrip(req *http.Request) (*http.Response, error) {
	body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not read: presumed absent"}`
	return &http.Response{
		StatusCode: http.StatusNotFound,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}, nil
}
