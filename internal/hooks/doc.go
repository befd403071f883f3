// Package hooks is the API for day-2 logic written in Go alongside a chart.
//
// A hook is a named value implementing one or more of:
//
//   - Translator: turns the custom resource into values, or adds to them
//     (may read the cluster). Runs on every reconcile, in registration order,
//     before the desired digest is computed: what it returns is released.
//   - PreRelease: runs before each install or upgrade, with the final values.
//   - PostRelease: runs on every reconcile once the release is deployed from
//     the desired values (ready or not): the place for day-2 loops.
//   - BeforeUninstall: runs before the release is uninstalled on deletion
//     (e.g. a final backup); the uninstall waits until it succeeds.
//
// Contracts. Every call gets a context that ends at the hook's Timeout
// (default 30 s), the custom resource, a client, the release's name and
// namespace, the engine's clock and a logger. A hook must be idempotent:
// it may run again at any time. An error stops the step: the resource's Ready
// condition turns False with a reason naming the hook ("<Hook>HookFailed")
// and a message naming the hook and phase, and the step is retried with the work queue's exponential backoff;
// nothing else about the release changes. A Result may ask for the next
// reconcile after a duration. A hook may write into the resource's
// status.app (Request.AppStatus), which is persisted with the status.
//
// Built-in hooks are turned on per watch in watches.yaml (FromWatch); Go
// hooks are attached per kind in one place, apps.Register.
// Adapters in hop.go run hooks and translators written for
// operator-framework's helm-operator-plugins unchanged.
package hooks
