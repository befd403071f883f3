package watches

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/readiness"
)

// resolveExpressions compiles readiness.expressions; each entry that does
// not compile, or names a kind twice, is reported on its own field.
func resolveExpressions(exprs []ReadinessExpression, add func(field, format string, args ...any)) *readiness.Rules {
	if len(exprs) == 0 {
		return nil
	}
	var compiled []*readiness.Expressions
	seen := map[schema.GroupKind]int{}
	for i, x := range exprs {
		field := fmt.Sprintf("readiness.expressions[%d]", i)
		gv, err := schema.ParseGroupVersion(x.APIVersion)
		switch {
		case x.APIVersion == "" || x.Kind == "":
			add(field, "apiVersion and kind are required")
			continue
		case err != nil:
			add(field+".apiVersion", "%v", err)
			continue
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: x.Kind}
		if j, dup := seen[gk]; dup {
			add(field, "kind %s already has expressions (entry %d)", gk, j)
			continue
		}
		seen[gk] = i
		e, err := readiness.NewExpressions(gk, x.Current, x.Failed, x.InProgress)
		if err != nil {
			add(field, "%v", err)
			continue
		}
		compiled = append(compiled, e)
	}
	rules, err := readiness.NewRules(compiled...)
	if err != nil { // duplicates were reported above
		return nil
	}
	return rules
}
