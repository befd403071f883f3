// Package corpus holds test charts shaped like the public charts people
// package with create-api (one directory per chart), and the tests that
// hold for every one of them. The charts are written for this project,
// not copied.
package corpus
