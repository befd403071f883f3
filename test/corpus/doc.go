// Package corpus holds test charts shaped like the public charts people
// package with create-api (one directory per chart), and the tests that
// hold for every one of them. The charts are written for this project,
// not copied.
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
