package watches

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PredecessorFields are the watches.yaml fields that exist for files
// written for operator-sdk's Helm operator (docs/migrating.md, "watches.yaml
// and annotations"): each is honoured with its meaning there, or refused
// at load saying why. Watch embeds them, so they sit beside the others in
// YAML.
type PredecessorFields struct {
	// DryRunOption is operator-sdk's choice of how the dry run that decides
	// an upgrade renders lookup(): DryRunServer ("server") or unset.
	// chartkeeper renders lookup() against the cluster in every install and
	// upgrade (what "server" asks for) and has no client-side render, so
	// other values are refused (see validateDryRunOption).
	DryRunOption string `json:"dryRunOption,omitempty"`
	// OverrideValuesAsStrings sets overrideValues as operator-sdk's Helm
	// operator does: each a string (Helm's --set-string: "2" and "true"
	// stay strings), merged over the spec (values.ComputeAs). Default
	// false: set into the spec typed, as Helm's --set and
	// helm-operator-plugins set them (2 an integer, true a boolean).
	OverrideValuesAsStrings bool `json:"overrideValuesAsStrings,omitempty"`
}

// DryRunServer is the one dryRunOption chartkeeper honours.
const DryRunServer = "server"

// validateDryRunOption accepts operator-sdk's dryRunOption where its
// meaning is chartkeeper's behaviour, and refuses it, saying why, where
// it is not.
func validateDryRunOption(v string, add func(field, format string, args ...any)) {
	switch v {
	case "", DryRunServer:
	case "client", "none", "true", "false":
		add("dryRunOption", "%q is refused: it renders the chart's lookup() calls as empty when deciding an upgrade, "+
			"and chartkeeper has no such render: it decides upgrades by the chart and the values, and lookup() reads the "+
			"cluster in every install and upgrade (dryRunOption %q; see lookup): remove the field or set it to %q",
			v, DryRunServer, DryRunServer)
	default:
		add("dryRunOption", "%q is not a dry-run option: unset or %q (operator-sdk also read client, none, true and false, "+
			"which chartkeeper refuses: it always evaluates lookup() against the cluster)", v, DryRunServer)
	}
}

// resolveChartPath finds a relative chart path as both chartkeeper and
// its predecessors do: chartkeeper against the watches file's directory,
// operator-sdk and helm-operator-plugins against the working directory
// (the same directory in their images, /opt/helm). The first that holds
// the chart is used; two different charts, one in each, are refused
// rather than one of them chosen silently.
func resolveChartPath(baseDir, p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	fromFile := filepath.Join(baseDir, p)
	cwd, err := os.Getwd()
	if err != nil {
		return fromFile, nil
	}
	fromWD := filepath.Join(cwd, p)
	fileOK, wdOK := exists(fromFile), exists(fromWD)
	switch {
	case fileOK && wdOK && !sameFile(fromFile, fromWD):
		return "", fmt.Errorf("%q names two charts: %s (relative to the watches file) and %s (relative to the working directory, "+
			"as operator-sdk and helm-operator-plugins resolve it): write an absolute path", p, absOf(fromFile), fromWD)
	case fileOK || !wdOK:
		return fromFile, nil
	default:
		return fromWD, nil
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func absOf(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// notFoundHint says where a relative chart path that holds no chart was
// looked for.
func notFoundHint(p string, err error) string {
	if filepath.IsAbs(p) || !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	cwd, _ := os.Getwd()
	return fmt.Sprintf(" (looked relative to the watches file's directory and to the working directory %s)", cwd)
}
