package helm

import (
	"testing"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// TestMain stops the local cluster a test of this package started, if any
// (testenv.Cluster; make test hands the package its own).
func TestMain(m *testing.M) { testenv.Main(m) }
