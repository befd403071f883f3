// Command chartkeeper is the operator binary: "chartkeeper run" reconciles
// every custom resource kind listed in watches.yaml into a Helm release.
package main

import (
	"os"

	"github.com/chartkeeper/chartkeeper/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
