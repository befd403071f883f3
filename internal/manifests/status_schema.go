package manifests

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

func str(desc string) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "string", Description: desc}
}
func integer(desc string) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "integer", Description: desc}
}
func timestamp(desc string) apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{Type: "string", Format: "date-time", Description: desc}
}

// StatusSchema is the OpenAPI schema of api.Status.
func StatusSchema() apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{
		Type:        "object",
		Description: "Observed state of the release, written by chartkeeper.",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"observedGeneration": {Type: "integer", Format: "int64", Description: "The metadata.generation this status describes."},
			"conditions": {
				Type: "array", Description: "Ready, Released, Reconciling, Stalled, Remediated.",
				XListType: ptrStr("map"), XListMapKeys: []string{"type"},
				Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					// chartkeeper always writes all five fields; only type
					// and status are required so that helm-operator-plugins,
					// which leaves reason and message out of some conditions,
					// can write this status after a switch back
					// (docs/migrating.md, Back out).
					Required: []string{"type", "status"},
					Properties: map[string]apiextv1.JSONSchemaProps{
						"type":               str("Condition type."),
						"status":             {Type: "string", Enum: enum("True", "False", "Unknown")},
						"observedGeneration": {Type: "integer", Format: "int64"},
						"lastTransitionTime": timestamp("When the status last changed."),
						"reason":             str("Machine-readable reason in CamelCase."),
						"message":            str("Human-readable details."),
					},
				}},
			},
			"release": {
				Type: "object", Description: "Summary of the Helm release.",
				Required: []string{"name", "namespace"},
				Properties: map[string]apiextv1.JSONSchemaProps{
					"name":           str("Release name."),
					"namespace":      str("Release namespace."),
					"revision":       integer("Current revision."),
					"chart":          str("Chart name."),
					"version":        str("Chart version."),
					"appVersion":     str("Chart appVersion."),
					"digest":         str("Digest of the chart and values of the current revision."),
					"lastAction":     str("Last Helm action: Install, Upgrade, Rollback, Uninstall, Unlock, CorrectDrift."),
					"lastActionTime": timestamp("When the last action ran."),
				},
			},
			"failures":           integer("Consecutive failed attempts for failedDigest."),
			"failedDigest":       str("Desired digest the failures were counted for."),
			"lastFailureTime":    timestamp("When the last failure happened."),
			"lastFailureMessage": str("Why the last failed attempt failed (values marked secret redacted)."),
			"terminalError":      str("The chart's message when it rejects the values of terminalDigest."),
			"terminalDigest":     str("Desired digest the terminal error applies to."),
			"terminalReason":     str("Reason of the terminal error when it is not ChartError (CRDUpgradeRefused)."),
			"nextAttemptTime":    timestamp("After a failure, backoffOf is not tried again before this time (exponential backoff with jitter)."),
			"backoffOf":          str("What failed and is backed off: an action (Install, Upgrade, Rollback, Uninstall, Unlock, CorrectDrift, Prune), a Go hook phase, or ValuesFrom (an object of valuesFrom is missing or unreadable)."),
			"backoffFailures":    integer("Consecutive failures of backoffOf for backoffDigest."),
			"backoffDigest":      str("Desired digest the backoff applies to."),
			"app": {Type: "object", Description: "What Go hooks report about the running application.",
				XPreserveUnknownFields: ptrBool(true)},
			"lastHandledReconcileAt": str("The last value of the chartkeeper.dev/reconcile-requested-at annotation acted on."),
			"backoffReason":          str("The reason a backed-off failure is reported with while it waits (MissingDependency, Forbidden, ValuesSourceMissing), when it says more than Backoff."),
			"plan":                   planSchema(),
			"appliedPlan":            str("Digest of the last plan approved and applied."),
			"history":                historySchema(),
			"inventory":              inventorySchema(),
			"test": {
				Type: "object", Description: "The outcome of the chart's tests (helm test) at a revision, when the watch runs them (test.enable).",
				Required: []string{"revision", "result"},
				Properties: map[string]apiextv1.JSONSchemaProps{
					"revision": integer("The release revision the tests ran against."),
					"result":   {Type: "string", Enum: enum(string(api.TestSucceeded), string(api.TestFailed)), Description: "Succeeded, or Failed: a test failed or did not finish in time."},
					"message":  str("The tests run, or the one that failed and why."),
					"time":     timestamp("When they finished."),
				},
			},
		},
	}
}

// historySchema is the schema of api.Status.History.
func historySchema() apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{
		Type: "array", Description: "The last attempts (actions run on the release), newest first.",
		MaxItems: ptrInt(api.MaxHistory),
		Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{
			Type:     "object",
			Required: []string{"action", "startedAt", "finishedAt", "result", "reason"},
			Properties: map[string]apiextv1.JSONSchemaProps{
				"action":       str("Install, Upgrade, Rollback, Uninstall, Unlock, CorrectDrift or Prune."),
				"revision":     integer("The revision the action made or acted on (0: nothing stored)."),
				"chart":        str("Chart name."),
				"chartVersion": str("Chart version."),
				"digest":       str("Digest of the chart and values (the revision's chartkeeper.dev/digest label)."),
				"valuesDigest": str("Digest of the values alone (install, upgrade)."),
				"startedAt":    timestamp("When the action started."),
				"finishedAt":   timestamp("When the action finished."),
				"result":       {Type: "string", Enum: enum(string(api.AttemptSucceeded), string(api.AttemptFailed))},
				"reason":       str("Machine-readable reason in CamelCase, as the Released condition's."),
				"message":      str("What happened (secret values redacted)."),
			},
		}},
	}
}

// inventorySchema is the schema of api.Status.Inventory.
func inventorySchema() apiextv1.JSONSchemaProps {
	states := make([]string, 0, len(api.ObjectStates()))
	for _, s := range api.ObjectStates() {
		states = append(states, string(s))
	}
	return apiextv1.JSONSchemaProps{
		Type: "object", Description: "The objects of the release's revision and their readiness, not-ready first; the counts cover every object.",
		Required: []string{"revision", "total", "ready", "notReady"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"revision": integer("The revision whose objects these are."),
			"total":    integer("Objects of the revision."),
			"ready":    integer("Objects that are ready."),
			"notReady": integer("Objects missing, failed or not ready yet."),
			"omitted":  integer("Objects not listed in entries."),
			"entries": {
				Type: "array", Description: "The objects, worst state first.",
				MaxItems: ptrInt(api.MaxInventoryEntries),
				Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{
					Type:     "object",
					Required: []string{"apiVersion", "kind", "name", "state"},
					Properties: map[string]apiextv1.JSONSchemaProps{
						"apiVersion": str("API version."),
						"kind":       str("Kind."),
						"namespace":  str("Namespace (empty: cluster-scoped)."),
						"name":       str("Name."),
						"state":      {Type: "string", Enum: enum(states...)},
						"message":    str("Why it is not ready."),
					},
				}},
			},
		},
	}
}

func ptrStr(s string) *string { return &s }
func ptrInt(n int) *int64     { v := int64(n); return &v }
func ptrBool(b bool) *bool    { return &b }

func enum(vals ...string) []apiextv1.JSON {
	out := make([]apiextv1.JSON, len(vals))
	for i, v := range vals {
		out[i] = apiextv1.JSON{Raw: []byte(`"` + v + `"`)}
	}
	return out
}
