package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/scaffold"
)

// createAPICommand packages a chart as a new kind: chart, watch entry,
// optional hook stub (package scaffold), then CRD, RBAC and sample
// (GenerateManifests), then the entry's scope, storage and CRD policy
// (scaffold's Result.Decide), all idempotent. It parses the flags, prints
// what was done and returns the exit code.
func createAPICommand(args []string, stdout, stderr io.Writer) int {
	fs := apps.NewFlagSet("create-api", stderr)
	var o scaffold.Options
	fs.StringVar(&o.Chart, "chart", "", "chart directory or .tgz to package (required)")
	fs.StringVar(&o.Group, "group", "", "API group of the new kind, e.g. apps.example.com (required)")
	fs.StringVar(&o.Version, "version", "", "API version, e.g. v1alpha1 (required)")
	fs.StringVar(&o.Kind, "kind", "", "kind, UpperCamelCase, e.g. Memcached (required)")
	fs.StringVar(&o.ProjectDir, "project-dir", ".", "project root (watches.yaml, charts/, config/, internal/apps)")
	fs.BoolVar(&o.Hook, "hook", false, "also write the kind's app internal/apps/<kind>/hook.go (a Go hook stub) and regenerate internal/apps/all")
	fs.StringVar(&o.ServiceAccount, "service-account", "", `run the kind's releases as this ServiceAccount ("name" in the release namespace, or a template such as "{{ .Namespace }}/chartkeeper-release"); writes config/rbac/release/ with the ClusterRole to bind to it in each namespace`)
	allowBreaking := fs.Bool("allow-breaking", false, "write a CRD schema that breaks existing custom resources of the same version")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: chartkeeper create-api --chart DIR|TGZ --group G --version V --kind K [flags]\n\n")
		fs.PrintDefaults()
	}
	if code, ok := apps.ParseFlags(fs, args); !ok {
		return code
	}
	res, err := scaffold.CreateAPI(o)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper create-api: %v\n", err)
		return ExitConfig
	}
	configDir := filepath.Join(o.ProjectDir, "config")
	files, warns, err := GenerateManifests(filepath.Join(o.ProjectDir, "watches.yaml"), configDir,
		manifests.CRDOptions{AllowBreaking: *allowBreaking})
	if err != nil {
		if rerr := res.Rollback(); rerr != nil {
			fmt.Fprintf(stderr, "chartkeeper create-api: putting back the chart and watches.yaml: %v\n", rerr)
		}
		return reportError(stderr, "chartkeeper create-api (nothing changed)", err)
	}
	decided, err := res.Decide(o, configDir, files)
	for _, n := range decided.Notes {
		fmt.Fprintln(stderr, n)
	}
	if err != nil {
		if rerr := res.Rollback(); rerr != nil {
			fmt.Fprintf(stderr, "chartkeeper create-api: putting back the chart and watches.yaml: %v\n", rerr)
		}
		return reportError(stderr, "chartkeeper create-api (nothing changed)", err)
	}
	if err := res.Commit(); err != nil {
		fmt.Fprintf(stderr, "chartkeeper create-api: %v\n", err)
	}
	for _, c := range res.Changes {
		fmt.Fprintln(stdout, c)
		if c.Path == "watches.yaml" {
			for _, l := range decided.Lines {
				fmt.Fprintln(stdout, l)
			}
		}
	}
	return writeAndReport(stdout, stderr, "chartkeeper create-api", configDir, "config", files, warns)
}
