// Package controller is the Kubernetes plumbing around the release engine:
// one controller per watched kind. A reconcile fetches the custom resource,
// keeps chartkeeper's finalizer on it, runs one release step, patches the
// status once (deferred, only if it changed) and returns the requeue the
// engine decided. It also owns the watches: the custom resources themselves (full
// objects, filtered by the watch's selector), and, through a separate
// label-scoped metadata-only cache, release Secrets and released objects of
// every kind a release holds, registered as releases reveal them; and
// (ValuesSources) each ConfigMap or Secret a watch's valuesFrom names, one
// watch per object, for as long as a resource names it.
package controller
