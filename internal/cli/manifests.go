package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// manifestsCommand generates (or, with --check, verifies) the CRDs and the
// ClusterRole that follow from watches.yaml.
func manifestsCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chartkeeper manifests", flag.ContinueOnError)
	fs.SetOutput(stderr)
	watchesFile := fs.String("watches-file", "watches.yaml", "path of watches.yaml")
	dir := fs.String("config-dir", "config", "kustomize config directory to write into")
	check := fs.Bool("check", false, "write nothing; exit 1 if the generated files are not up to date")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitConfig
	}
	ws, err := watches.Load(*watchesFile)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper: invalid watches file %s:\n%s\n", *watchesFile, indent(err.Error()))
		return ExitConfig
	}
	samples, err := manifests.ReadSamples(filepath.Join(*dir, "samples"))
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper manifests: reading samples: %v\n", err)
		return ExitFailure
	}
	reg, err := newRegistry(ws, apps.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper manifests: %v\n", err)
		return ExitConfig
	}
	files, err := manifests.Files(ws, samples, reg.Rules())
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper manifests: %v\n", err)
		return ExitFailure
	}
	if *check {
		if stale := manifests.Stale(*dir, files); len(stale) > 0 {
			fmt.Fprintf(stderr, "chartkeeper manifests: generated files are out of date (run make manifests):\n%s\n", indent(fmt.Sprint(stale)))
			return ExitFailure
		}
		fmt.Fprintln(stdout, "manifests: up to date")
		return ExitOK
	}
	if err := manifests.Write(*dir, files); err != nil {
		fmt.Fprintf(stderr, "chartkeeper manifests: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(stdout, "manifests: wrote %d files under %s\n", len(files), *dir)
	return ExitOK
}
