package cli

import (
	"fmt"
	"io"

	"github.com/chartkeeper/chartkeeper/internal/version"
)

// Exit codes of the chartkeeper command.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitConfig  = 2
)

const usage = `chartkeeper: keeps one Helm release per custom resource.

Usage:
  chartkeeper run [flags]     run the operator (see "chartkeeper run -h")
  chartkeeper manifests       generate CRDs, RBAC and samples from watches.yaml into config/
  chartkeeper create-api      package a chart as a new kind (chart, watch, CRD, RBAC, sample)
  chartkeeper images          list the images the bundled charts release
  chartkeeper etcd-restore    seed an EtcdCluster member from a backup (runs in its Pod)
  chartkeeper version         print the version
`

// Main runs the command line with args (without the program name) and
// returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
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
	case "etcd-restore":
		return etcdRestoreCommand(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "chartkeeper", version.String())
		return ExitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "chartkeeper: unknown command %q\n\n%s", args[0], usage)
		return ExitConfig
	}
}
