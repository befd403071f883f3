// Package hooks is the contract between the engine and day-2 logic written
// in Go alongside a chart: what a hook implements, what it is given, what
// it returns. It holds no hook and runs none: the built-in hooks are in
// package builtin, the adapters for helm-operator-plugins in package
// hopadapter, and the release engine runs the hooks of each kind.
//
// # Phases
//
// A hook is a named value (Hook) implementing one or more of:
//
//   - Translator: turns the custom resource into values, or adds to them
//     (may read the cluster). Runs on every reconcile, in registration
//     order, each on the previous one's output, before the desired digest
//     is computed: what the last one returns is released (PhaseTranslate).
//   - PreRelease: runs before each install or upgrade, with the final
//     values (PhasePreRelease).
//   - PostRelease: runs on every reconcile once the release is deployed
//     from the desired values (ready or not): the place for day-2 loops
//     (PhasePostRelease).
//   - BeforeUninstall: runs before the release is uninstalled on deletion
//     (e.g. a final backup); the uninstall waits until it succeeds
//     (PhaseBeforeUninstall).
//
// A function is turned into a hook of one phase with TranslatorFunc,
// PreReleaseFunc, PostReleaseFunc or BeforeUninstallFunc; a type that
// serves several phases implements several interfaces.
//
// # Contracts
//
// Every call gets the custom resource, an uncached client, the release's
// name and namespace, the engine's clock and a logger naming the hook
// (Request). A hook must be idempotent: it may run again at any time, and
// changes it makes to Request.Object are not saved. A Result may ask for
// the next reconcile after a duration; the soonest request of a phase's
// hooks wins (Result.Merge).
//
// # Errors
//
// An error stops the step: the resource's Ready condition turns False with
// the reason HookFailed and a message naming the hook and the phase (an
// *Error, e.g. "hook freeze (pre-release): ..."), an Event is recorded, and
// the phase is tried again after the watch's remediation backoff
// (exponential in the failures in a row, with jitter; the resource's
// status.nextAttemptTime says when), no step calling the hook before then.
// Nothing else about the release changes: a failing PreRelease prevents the
// install or upgrade, a failing BeforeUninstall holds the uninstall (and
// the deletion: the finalizer stays).
//
// # Timeouts
//
// Each call's context ends after the hook's Timeout (DefaultTimeout when
// unset); a hook that runs out of time fails with an error saying so.
// Long work (a backup) belongs in a PostRelease that starts it and asks
// to be called again (Result.RequeueAfter) to see it through.
//
// # status.app
//
// Request.AppStatus is the resource's status.app: a hook fills it and the
// engine saves it with the status, so the resource says what the
// application reports (members, last backup, ready replicas).
//
// # Registration
//
// A Registry holds the hooks of each kind in the order they run; Add
// rejects a hook without a name, implementing no phase, or named twice for
// a kind. The built-in hooks a watch turns on in watches.yaml are added
// first, then the hooks of the bundled apps (package apps). A hook that
// needs API access beyond the chart's own objects implements Permissions,
// and one that puts images of its own into released Pods implements
// ImageUser, so that generated RBAC and `chartkeeper images` include them.
package hooks
