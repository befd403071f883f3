// Package ownership ties released objects to the custom resource they were
// released for.
//
// Its PostRenderer runs on every rendered manifest: each object gets the
// label chartkeeper.dev/managed (which chartkeeper's dependent watches select
// on) and the annotation chartkeeper.dev/owner naming its custom resource;
// namespaced objects in the resource's own namespace also get an
// ownerReference to it, so the garbage collector and `kubectl tree` see the
// relation. Objects marked helm.sh/resource-policy: keep get none (they
// must outlive the resource; see Kept). Objects elsewhere (other namespaces, cluster scope) cannot carry
// such a reference and are mapped back by the annotation instead.
package ownership
