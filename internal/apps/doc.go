// Package apps is the plugin mechanism of the bundled applications: each
// app lives in a folder of its own under internal/apps (its package's
// init calls Register) and contributes the Go hooks of its kinds, the
// flags it reads (bound by `chartkeeper run` and `chartkeeper images`) and
// subcommands of its own. Package all imports every app folder; the
// command line uses the accessors here and names no app.
//
// Built-in hooks configured in watches.yaml (credentials, TLS, status
// fields) are added before the apps' hooks, so they run first.
package apps
