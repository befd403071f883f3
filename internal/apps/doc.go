// Package apps attaches the Go hooks of the bundled kinds (charts/) to
// their kinds: Register is the one place a hook written in Go is turned on.
// Built-in hooks configured in watches.yaml (credentials, TLS, status
// fields) are added before these, so they run first.
package apps
