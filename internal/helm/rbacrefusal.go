package helm

import (
	"regexp"
	"strings"
)

// The API server's RBAC refusals, in its own words (apiserver's
// responsewriters.forbiddenMessage; kubernetes' pkg/registry/rbac: the
// escalation check of Roles, ClusterRoles and their bindings, and the
// aggregationRule of a ClusterRole), each after "<resource> ["<name>"] is
// forbidden: ". Each is a missing right of whoever asked, which a grant
// heals without a change of the request: unlike an admission refusal with
// the same code (an exceeded quota, a policy).
var (
	// denied: authorization refused the request itself (any verb,
	// impersonate, bind and escalate included); verb, resource and group.
	denied = regexp.MustCompile(` is forbidden: User "[^"]*" cannot ([a-z]+) resource "([^"]+)" in API group "([^"]*)"`)
	// deniedPath: authorization refused a request that is not for a
	// resource.
	deniedPath = regexp.MustCompile(`forbidden: User "[^"]*" cannot [a-z]+ path "`)
	// escalation: a Role, ClusterRole or binding grants what the user does
	// not hold, and the user may not escalate (roles) or bind (bindings);
	// the object (resource and name) and the user.
	escalation = regexp.MustCompile(`(\S+) "([^"]*)" is forbidden: user "([^"]*)" \(groups=.*?\) is attempting to grant RBAC permissions not currently held`)
)

// aggregationRefused is the refusal of a ClusterRole's aggregationRule
// to a user who is not cluster-admin.
const aggregationRefused = " is forbidden: must have cluster-admin privileges to use the aggregationRule"

// RBACRefused reports whether msg (an error's text, possibly wrapped in
// Helm's words) holds one of the API server's RBAC refusals.
func RBACRefused(msg string) bool {
	return denied.MatchString(msg) || deniedPath.MatchString(msg) || escalation.MatchString(msg) || strings.Contains(msg, aggregationRefused)
}
