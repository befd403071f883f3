// Package corpus holds test charts shaped like the public charts people
// package with create-api (one directory per chart), and the tests that
// hold for every one of them. The charts are written for this project,
// not copied.
//
//   - kvstore: a partial values.schema.json (most keys only in values.yaml).
//   - sqldb: $ref, allOf, anyOf/oneOf, enum, patternProperties; values-production.yaml.
//   - gizmo-controller: cluster RBAC (resourceNames, nonResourceURLs, an
//     aggregated ClusterRole) and a CRD in crds/.
//   - certissuer: a CRD in crds/ and one in templates (crds.enabled, as
//     cert-manager-style charts do), and a default Issuer, an instance of
//     its own crds/ CRD, in the same release.
//   - migrating-app: hook Jobs: pre-install/pre-upgrade migration,
//     post-install seed, pre-delete archive, with hook weights and
//     before-hook-creation,hook-succeeded.
//   - storefront: an umbrella chart with a library chart (named templates,
//     a tpl-render helper) and a subchart enabled by a condition, both in
//     charts/; global values; tpl over values (extraEnv, config); an
//     existingSecret pattern.
//   - keyvault: lookup (a generated password kept across upgrades) and
//     .Capabilities checks (APIVersions.Has, semverCompare on KubeVersion).
//   - webserver: a PodDisruptionBudget rendered only above one replica
//     (an upgrade that fails at one replica leaves it live, and the
//     rollback must bring it back without recreating it), an image pull
//     policy the chart leaves free for the API server to judge.
//   - objcache: containers sized by resource presets (resourcesPreset:
//     nano, micro, ...) that request and limit ephemeral-storage besides
//     cpu and memory, as widely used public charts size theirs; a node
//     that advertises no ephemeral-storage schedules none of its Pods.
//   - docdb: a database StatefulSet whose members start one after another
//     (podManagementPolicy OrderedReady), each with a volume from
//     volumeClaimTemplates; headless and client Services; a generated
//     password kept with lookup; scheduling values (nodeSelector,
//     anti-affinity presets) that can leave its first member Pending.
//   - ingress-router: an ingress controller without values.schema.json
//     whose values keep everything under one big `controller` key; its
//     PodDisruptionBudget asks `hasKey .Values.controller "maxUnavailable"`
//     (the key commented out in values.yaml) and its other templates read
//     the subtree field by field, with, range and toYaml mixed: the
//     inferred CRD types the subtree's scalars and keeps the maps passed on
//     whole free-form.
//   - monitoring-stack: a release whose stored record is over 3 MiB
//     (dashboard ConfigMaps with deterministic sample data; sizes set by
//     values.dashboards).
//
// Beyond the tests here, test/e2e's TestCorpusWalk packages every chart
// with create-api and walks it on a real cluster (a chart without a row
// there fails the walk).
//
// testdata/<chart>.golden records what create-api decides for each chart
// (the watch entry it writes: scope, storage, CRD policy; what it prints
// about them and about the RBAC it adds from the chart's own roles; the
// generated ClusterRole's rules; the release record's size class), so that
// a change of decision shows in review. A chart added to the corpus fails
// TestCreateAPIDecisions with "no golden file; run with -update" until its
// golden file is written, and a change of decision fails it with both
// texts. To (re)write them after reviewing the change:
//
//	go test ./test/corpus -run TestCreateAPIDecisions -update
//
// then read `git diff test/corpus/testdata` before committing.
package corpus
