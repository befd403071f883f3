package fuzzing

import (
	"fmt"
	"strings"
)

// YAMLString quotes s for a YAML document as a person could write it:
// a double-quoted scalar with every rune outside printable ASCII escaped
// (YAML refuses some raw).
func YAMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
