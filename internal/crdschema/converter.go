package crdschema

import (
	"fmt"

	"go.yaml.in/yaml/v3"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Warning is one part of a chart's schema the CRD does not express. The
// API server accepts what it says no to; Helm still refuses it when the
// custom resource is reconciled (a Stalled condition with Helm's message).
type Warning struct {
	// Path is the field, as in a custom resource ("spec.image.tag").
	Path string
	// Detail says what is not expressed and why.
	Detail string
}

func (w Warning) String() string { return w.Path + ": " + w.Detail }

// converter turns one draft-07 JSON schema into a structural schema.
type converter struct {
	root  map[string]any
	usage usage
	warns []Warning
	refs  []string // $refs being expanded, to stop at recursion
	// expanding are the YAML anchors being inferred, to stop at an alias
	// inside its own anchor.
	expanding map[*yaml.Node]bool
	visited   int // schema nodes converted or values.yaml nodes inferred
	// openMaps is above 0 while keys the chart's schema does not declare
	// are typed from values.yaml: their maps keep unknown fields, as the
	// schema allows.
	openMaps int
}

// maxNodes bounds the work on a schema or values.yaml whose $refs or
// aliases expand exponentially (the CRD would be too big for etcd anyway).
const maxNodes = 50000

// overBudget counts a node and reports (once) when there were too many.
func (c *converter) overBudget(a at) bool {
	c.visited++
	if c.visited == maxNodes+1 {
		c.warn(a, "the schema expands to more than %d nodes ($refs, aliases): from here on any value is accepted", maxNodes)
	}
	return c.visited > maxNodes
}

// at is where in the values a schema node sits.
type at struct {
	path     string     // as shown to users: spec.a.b, spec.list[*].c
	values   string     // dotted values path for template usage; "" at the root
	inList   bool       // under an array: no chart defaults, no template usage
	defaults any        // the chart's default value here (maps only matter)
	node     *yaml.Node // values.yaml here, when converting a schema; nil in lists
}

func (a at) child(key string) at {
	c := at{path: a.path + "." + key, inList: a.inList}
	if !a.inList {
		c.values = join(a.values, key)
	}
	if m, ok := a.defaults.(map[string]any); ok {
		c.defaults = m[key]
	}
	if a.node != nil {
		c.node = lookup(a.node, key)
	}
	return c
}

func (a at) items() at { return at{path: a.path + "[*]", inList: true} }

func (a at) mapValues() at { return at{path: a.path + ".*", inList: true} }

func (c *converter) warn(a at, format string, args ...any) {
	c.warns = append(c.warns, Warning{Path: a.path, Detail: fmt.Sprintf(format, args...)})
}

// anyValue accepts every JSON value (and keeps it whole).
func anyValue() apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
}

func ptrTrue() *bool { t := true; return &t }
