// Package operator assembles chartkeeper's controller-runtime manager: the
// client and cache (optionally confined to namespaces), metrics and health
// endpoints, leader election, and one controller per watched kind.
//
// New validates its options and returns an Operator whose Run blocks until
// the context ends, then stops every controller and endpoint cleanly.
package operator
