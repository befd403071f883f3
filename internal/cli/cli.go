package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	_ "github.com/chartkeeper/chartkeeper/internal/apps/all" // the bundled apps register themselves
	"github.com/chartkeeper/chartkeeper/internal/version"
)

// Exit codes of the chartkeeper command (the same for the apps' commands).
const (
	ExitOK      = apps.ExitOK
	ExitFailure = apps.ExitFailure
	ExitConfig  = apps.ExitConfig
)

// usage lists the built-in commands, then the apps' commands.
func usage() string {
	var b strings.Builder
	b.WriteString("chartkeeper: keeps one Helm release per custom resource.\n\nUsage:\n")
	line := func(cmd, what string) { fmt.Fprintf(&b, "  chartkeeper %-16s%s\n", cmd, what) }
	line("run [flags]", `run the operator (see "chartkeeper run -h")`)
	line("manifests", "generate CRDs, RBAC and samples from watches.yaml into config/")
	line("create-api", "package a chart as a new kind (chart, watch, CRD, RBAC, sample)")
	line("images", "list the images the bundled charts release")
	line("diff -f cr.yaml", "print what applying custom resources would change in their releases (the plan of upgrade.approval: manual)")
	for _, c := range apps.Commands() {
		line(c.Name, c.Usage)
	}
	line("install-crds [dir]", "apply the CRDs in dir (default config/crd/bases) to the cluster and wait until they are Established (make run)")
	line("version", "print the version")
	return b.String()
}

// Main runs the command line with args (without the program name) and
// returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return ExitConfig
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "manifests":
		return manifestsCommand(args[1:], stdout, stderr)
	case "create-api":
		return createAPICommand(args[1:], stdout, stderr)
	case "images":
		return imagesCommand(args[1:], stdout, stderr)
	case "diff":
		return diffCommand(args[1:], stdout, stderr)
	case "install-crds":
		return installCRDsCommand(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "chartkeeper", version.String())
		return ExitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage())
		return ExitOK
	}
	if c, ok := apps.Lookup(args[0]); ok {
		return c.Run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "chartkeeper: unknown command %q\n\n%s", args[0], usage())
	return ExitConfig
}
