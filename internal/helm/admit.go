package helm

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"

	"helm.sh/helm/v3/pkg/kube"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// Admit is asked about every object an action is about to create or
// update, and about every object of the revision an upgrade or rollback
// starts from (a stored revision names them: see signing.go): its error
// fails the action before any of them is sent. An object it refuses is
// never deleted either (see admittingClient.Delete).
type Admit func(ownership.Placement) error

// admittingClient is a kube client that asks admit before each create and
// update: it sees hooks as well as manifests (Helm post-renders manifests
// only). It keeps the optional interfaces Helm's actions look for.
type admittingClient struct {
	kube.Interface
	admit Admit
}

func (c admittingClient) check(rl kube.ResourceList) error {
	return rl.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		return c.admit(placementOf(info))
	})
}

// placementOf is where an object of a resource list goes.
func placementOf(info *resource.Info) ownership.Placement {
	p := ownership.Placement{GVK: info.Object.GetObjectKind().GroupVersionKind(), Name: info.Name, Namespace: info.Namespace}
	if info.Mapping != nil && info.Mapping.Scope.Name() == meta.RESTScopeNameRoot {
		p.Namespace, p.ClusterScoped = "", true
	}
	return p
}

func (c admittingClient) Create(rl kube.ResourceList) (*kube.Result, error) {
	if err := c.check(rl); err != nil {
		return nil, err
	}
	return c.Interface.Create(rl)
}

func (c admittingClient) Update(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if err := c.checkBoth(original, target); err != nil {
		return nil, err
	}
	return c.Interface.Update(original, target, force)
}

// checkBoth admits the objects written and those of the stored revision
// the update starts from: it deletes those the target drops.
func (c admittingClient) checkBoth(original, target kube.ResourceList) error {
	if err := c.check(original); err != nil {
		return err
	}
	return c.check(target)
}

// Delete deletes only the objects admit allows (an uninstall's come from
// the stored revision): one outside the scope is left alone, never
// deleted. Not an error: Helm deletes a hook before creating it
// (before-hook-creation), and the create is then refused with the
// scope's own error.
func (c admittingClient) Delete(rl kube.ResourceList) (*kube.Result, []error) {
	rl = c.admitted(rl)
	if len(rl) == 0 {
		return &kube.Result{}, nil
	}
	return c.Interface.Delete(rl)
}

func (c admittingClient) DeleteWithPropagationPolicy(rl kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	rl = c.admitted(rl)
	if len(rl) == 0 {
		return &kube.Result{}, nil
	}
	if dp, ok := c.Interface.(kube.InterfaceDeletionPropagation); ok {
		return dp.DeleteWithPropagationPolicy(rl, policy)
	}
	return c.Interface.Delete(rl)
}

// admitted is rl less the objects admit refuses.
func (c admittingClient) admitted(rl kube.ResourceList) kube.ResourceList {
	return rl.Filter(func(info *resource.Info) bool { return c.admit(placementOf(info)) == nil })
}

func (c admittingClient) UpdateThreeWayMerge(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if err := c.checkBoth(original, target); err != nil {
		return nil, err
	}
	if tw, ok := c.Interface.(kube.InterfaceThreeWayMerge); ok {
		return tw.UpdateThreeWayMerge(original, target, force)
	}
	return c.Interface.Update(original, target, force)
}

func (c admittingClient) WaitForDelete(rl kube.ResourceList, timeout time.Duration) error {
	if ext, ok := c.Interface.(kube.InterfaceExt); ok {
		return ext.WaitForDelete(rl, timeout)
	}
	return nil
}

// withAdmit wraps kc when admit is set.
func withAdmit(kc kube.Interface, admit Admit) kube.Interface {
	if admit == nil {
		return kc
	}
	return admittingClient{Interface: kc, admit: admit}
}
