package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/crdschema"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// ConfigError is an invalid watches file: exit code ExitConfig.
type ConfigError struct {
	File string
	Err  error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("invalid watches file %s:\n%s", e.File, indent(e.Err.Error()))
}

func (e *ConfigError) Unwrap() error { return e.Err }

// GenerateManifests returns the files `chartkeeper manifests` writes under
// configDir for the watches in watchesFile (see manifests.Generate), with
// the permissions of the hooks this binary registers. A *ConfigError
// means the watches file is invalid; a *manifests.BreakingError that a
// chart's new schema breaks existing custom resources.
func GenerateManifests(watchesFile, configDir string, o manifests.CRDOptions) (map[string][]byte, []crdschema.Warning, error) {
	ws, err := watches.Load(watchesFile)
	if err != nil {
		return nil, nil, &ConfigError{File: watchesFile, Err: err}
	}
	reg, err := newRegistry(ws)
	if err != nil {
		return nil, nil, &ConfigError{File: watchesFile, Err: err}
	}
	return manifests.Generate(configDir, ws, reg.Rules(), o)
}

// manifestsCommand generates (or, with --check, verifies) the CRDs, the
// ClusterRole and missing samples that follow from watches.yaml.
func manifestsCommand(args []string, stdout, stderr io.Writer) int {
	fs := apps.NewFlagSet("manifests", stderr)
	watchesFile := fs.String("watches-file", "watches.yaml", "path of watches.yaml")
	dir := fs.String("config-dir", "config", "kustomize config directory to write into")
	check := fs.Bool("check", false, "write nothing; exit 1 if the generated files are not up to date")
	allowBreaking := fs.Bool("allow-breaking", false, "write a CRD schema that breaks existing custom resources of the same version")
	if code, ok := apps.ParseFlags(fs, args); !ok {
		return code
	}
	files, warns, err := GenerateManifests(*watchesFile, *dir, manifests.CRDOptions{AllowBreaking: *allowBreaking})
	if err != nil {
		return reportError(stderr, "chartkeeper manifests", err)
	}
	if *check {
		if stale := manifests.Stale(*dir, files); len(stale) > 0 {
			fmt.Fprintf(stderr, "chartkeeper manifests: generated files are out of date (run make manifests):\n%s\n", indent(fmt.Sprint(stale)))
			return ExitFailure
		}
		fmt.Fprintln(stdout, "manifests: up to date")
		return ExitOK
	}
	return writeAndReport(stdout, stderr, "chartkeeper manifests", *dir, *dir, files, warns)
}

// writeAndReport writes the generated files, prints what became of each
// and the schema warnings, and returns the exit code.
func writeAndReport(stdout, stderr io.Writer, command, dir, display string, files map[string][]byte, warns []crdschema.Warning) int {
	lines, err := writeFiles(dir, display, files)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", command, err)
		return ExitFailure
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	printWarnings(stderr, warns)
	return ExitOK
}

// reportError prints err for command and returns its exit code.
func reportError(stderr io.Writer, command string, err error) int {
	var ce *ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintf(stderr, "chartkeeper: %v\n", err)
		return ExitConfig
	}
	fmt.Fprintf(stderr, "%s: %v\n", command, err)
	return ExitFailure
}

// writeFiles writes files under dir and says what became of each
// ("created", "updated", "unchanged" and its path under display).
func writeFiles(dir, display string, files map[string][]byte) ([]string, error) {
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	stale := map[string]bool{}
	for _, rel := range manifests.Stale(dir, files) {
		stale[rel] = true
	}
	var out []string
	for _, rel := range rels {
		action := "unchanged"
		if stale[rel] {
			action = "updated"
			if _, err := os.Stat(filepath.Join(dir, rel)); errors.Is(err, os.ErrNotExist) {
				action = "created"
			}
		}
		out = append(out, fmt.Sprintf("%-9s %s", action, filepath.Join(display, rel)))
	}
	return out, manifests.Write(dir, files)
}

// printWarnings lists what the role holds for the charts' own RBAC, and
// what of the charts' schemas only Helm checks.
func printWarnings(w io.Writer, warns []crdschema.Warning) {
	var rbac, schema []crdschema.Warning
	for _, x := range warns {
		if x.Path == manifests.RBACNote {
			rbac = append(rbac, x)
		} else {
			schema = append(schema, x)
		}
	}
	if len(rbac) > 0 {
		fmt.Fprintln(w, "note: the RBAC config/rbac grants, per kind (whoever releases a chart must hold what the chart's own RBAC grants: the API server's escalation check):")
		for _, x := range rbac {
			fmt.Fprintf(w, "  %s\n", x.Detail)
		}
	}
	if len(schema) == 0 {
		return
	}
	fmt.Fprintln(w, "note: the API server does not check these parts of the charts' schemas (Helm does, when it reconciles):")
	for _, x := range schema {
		fmt.Fprintf(w, "  %s\n", x)
	}
}
