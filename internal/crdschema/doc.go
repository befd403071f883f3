// Package crdschema turns a Helm chart's values interface into the
// structural OpenAPI v3 schema of a CustomResourceDefinition's spec, and
// tells which changes to that schema would break custom resources that
// already exist.
//
// A chart with a values.schema.json has it converted (FromChart): local
// $refs are inlined, draft-07 keywords are mapped to what the API server
// accepts, and what it cannot express is reported as a Warning (Helm still
// checks it on every reconcile). A chart without one has the schema
// inferred from values.yaml types, with the comments above each key as
// descriptions. A converted object keeps unknown fields
// (x-kubernetes-preserve-unknown-fields) unless its additionalProperties is
// false, as JSON Schema says, and the undeclared keys values.yaml shows are
// typed from it (addUndeclared). An inferred object keeps unknown fields
// only where the chart really takes a free-form map: its default is empty,
// or its templates use it whole (toYaml .Values.x, range, a subtree handed
// to include); a map they only read field by field (.Values.x.y, hasKey,
// index with constant keys, with and .y in its body) is typed, with the
// keys they read that values.yaml lacks taking any value. The templates
// are read with text/template/parse (usage.go, usage_scan.go,
// usage_funcs.go).
//
// Breaking compares two spec schemas and lists, by field path, each change
// that an existing custom resource could fail: a field removed, a type
// narrowed, a new required field, a tighter bound or enum.
package crdschema
