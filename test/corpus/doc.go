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
