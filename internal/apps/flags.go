package apps

import (
	"errors"
	"flag"
	"io"
)

// NewFlagSet returns the flag set of the subcommand `chartkeeper <name>`;
// its usage and errors go to stderr.
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("chartkeeper "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// ParseFlags parses a subcommand's arguments. When ok is false the
// command ends at once with code: ExitOK after -h (the flag package
// printed the usage), ExitConfig on a bad flag (it printed why).
func ParseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, false
		}
		return ExitConfig, false
	}
	return ExitOK, true
}
