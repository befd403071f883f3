package devcluster

import (
	_ "embed"
	"os"
)

// extraStages are the kwok stages the local cluster adds to Config.KwokStages
// (kwok's own): hook Pods run to completion, and kwok's chaos stage that
// fails a labelled Pod (see kwok-stages.yaml).
//
//go:embed kwok-stages.yaml
var extraStages []byte

// extraStagesFile is where Up writes extraStages for kwok, in the state
// directory.
const extraStagesFile = "kwok-stages-devcluster.yaml"

// writeStages writes extraStages into the state directory (kwok reads it
// at start, after Config.KwokStages).
func (c *Cluster) writeStages() error {
	return os.WriteFile(c.path(extraStagesFile), extraStages, 0o644)
}
