package apps

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/hopadapter"
)

// App is one bundled application.
type App struct {
	// Name identifies the app (its folder's name).
	Name string
	// Kinds are the kinds the app serves.
	Kinds []schema.GroupKind
	// Flags, if set, binds the app's flags onto the flag set of
	// `chartkeeper run` and `chartkeeper images`, before they are parsed.
	Flags func(fs *flag.FlagSet)
	// Hooks, if set, returns the hooks of one of Kinds, in the order they
	// run. It is called after the flags are parsed, only for kinds that
	// watches.yaml names.
	Hooks func(gk schema.GroupKind) []hooks.Hook
	// HelmOperatorHooks, if set, returns the hooks a helm-operator-plugins
	// operator registered for one of Kinds (its translator, pre-hooks and
	// post-hooks), unchanged; they run after Hooks, named
	// "<app>-translator", "<app>-pre-1", "<app>-post-1", ...
	HelmOperatorHooks func(gk schema.GroupKind) hopadapter.Set
	// Commands are subcommands of chartkeeper the app adds.
	Commands []Command
}

// Command is a subcommand of chartkeeper: `chartkeeper <Name> args...`.
type Command struct {
	// Name is the subcommand, e.g. "etcd-restore".
	Name string
	// Usage is its one-line description in `chartkeeper help`.
	Usage string
	// Run runs it with the arguments after its name and returns the
	// process exit code (ExitOK, ExitFailure, ExitConfig).
	Run func(args []string, stdout, stderr io.Writer) int
}

// Exit codes of chartkeeper and of every Command.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitConfig  = 2
)

// set is a collection of apps, sorted by name.
type set struct{ apps []App }

// bundled holds the apps registered by the packages under internal/apps.
var bundled set

// Register adds an app; each app package calls it from its init. It
// panics on an app without a name or kinds, a name or command name used
// twice, or a command without Run: mistakes in the code, not in the input.
func Register(a App) {
	if err := bundled.add(a); err != nil {
		panic(err)
	}
}

func (s *set) add(a App) error {
	switch {
	case a.Name == "":
		return fmt.Errorf("apps: an app needs a name")
	case len(a.Kinds) == 0:
		return fmt.Errorf("apps: %s serves no kind", a.Name)
	}
	for _, o := range s.apps {
		if o.Name == a.Name {
			return fmt.Errorf("apps: %s is registered twice", a.Name)
		}
	}
	for _, c := range a.Commands {
		if c.Name == "" || c.Run == nil {
			return fmt.Errorf("apps: %s has a command without a name or Run", a.Name)
		}
		if _, taken := s.command(c.Name); taken {
			return fmt.Errorf("apps: %s: command %s is registered twice", a.Name, c.Name)
		}
	}
	i, _ := slices.BinarySearchFunc(s.apps, a.Name, func(x App, name string) int { return strings.Compare(x.Name, name) })
	s.apps = slices.Insert(s.apps, i, a)
	return nil
}

func (s *set) bindFlags(fs *flag.FlagSet) {
	for _, a := range s.apps {
		if a.Flags != nil {
			a.Flags(fs)
		}
	}
}

func (s *set) addHooks(r *hooks.Registry, watched func(schema.GroupKind) bool) error {
	for _, a := range s.apps {
		for _, gk := range a.Kinds {
			if !watched(gk) {
				continue
			}
			var hs []hooks.Hook
			if a.Hooks != nil {
				hs = a.Hooks(gk)
			}
			if a.HelmOperatorHooks != nil {
				hs = append(hs, a.HelmOperatorHooks(gk).Hooks(a.Name)...)
			}
			if err := r.Add(gk, hs...); err != nil {
				return fmt.Errorf("app %s: %w", a.Name, err)
			}
		}
	}
	return nil
}

func (s *set) commands() []Command {
	var out []Command
	for _, a := range s.apps {
		out = append(out, a.Commands...)
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (s *set) command(name string) (Command, bool) {
	for _, a := range s.apps {
		for _, c := range a.Commands {
			if c.Name == name {
				return c, true
			}
		}
	}
	return Command{}, false
}

// All returns the registered apps, sorted by name.
func All() []App { return slices.Clone(bundled.apps) }

// BindFlags binds every app's flags onto fs.
func BindFlags(fs *flag.FlagSet) { bundled.bindFlags(fs) }

// AddHooks adds the hooks of every app's kinds that watched reports, app
// by app in name order.
func AddHooks(r *hooks.Registry, watched func(schema.GroupKind) bool) error {
	return bundled.addHooks(r, watched)
}

// Commands returns the apps' subcommands, sorted by name.
func Commands() []Command { return bundled.commands() }

// Lookup returns the app subcommand called name.
func Lookup(name string) (Command, bool) { return bundled.command(name) }
