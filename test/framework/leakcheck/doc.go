// Package leakcheck looks for secret values where an operator must never
// write them: its log, the Events of the namespaces it works in, and the
// status and annotations of the custom resources it reconciles.
//
// A Set holds the values to look for, each with a label saying what it is
// ("Secret team/db key password"): generated credentials read back from the
// released Secrets (FromSecrets, AddSecret), values a Secret gave (Add).
// Values shorter than MinLength bytes are left out: they occur by chance in
// ordinary text. Each value is looked for in every form a log line or an
// API object may carry it: as it is, JSON-escaped (a JSON log line, a
// status) and Go-quoted, and base64-encoded (standard and URL alphabets,
// padded and raw, as Secret data and Helm's b64enc show it). A PEM block is
// also looked for line by line, so that one line of a private key in a log
// is found.
//
// The scans (ScanText, ScanFile, ScanEvents, ScanObject, ScanResources, or
// Scan for all of them at once) return a Leak for each value found, saying
// where (a log line, an Event's message, a status field), what and in which
// form. No Leak means nothing was found.
//
// The e2e test TestSecretsStayOutOfWhatTheOperatorWrites
// (test/e2e/secrets_test.go) uses it over one operator's run; the chaos
// harness can use Check over its own run (operator.log, its namespaces,
// its kind).
package leakcheck
