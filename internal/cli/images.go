package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/images"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// imageFlags are the global relocation flags of run and images.
type imageFlags struct {
	registry    string
	pullSecrets []string
}

func (f *imageFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.registry, "image-registry", envOr("IMAGE_REGISTRY", ""),
		"mirror registry (host[:port][/path]) for the released images of every watch without its own images setting (env IMAGE_REGISTRY)")
	if env := envOr("IMAGE_PULL_SECRETS", ""); env != "" {
		f.pullSecrets = strings.Split(env, ",")
	}
	fs.Func("image-pull-secret", "Secret added to the imagePullSecrets of released Pods of watches without their own images setting; repeatable (env IMAGE_PULL_SECRETS, comma-separated)",
		func(s string) error { f.pullSecrets = append(f.pullSecrets, s); return nil })
}

// apply gives the global setting to each watch without its own.
func (f *imageFlags) apply(ws []watches.Watch) error {
	if f.registry == "" && len(f.pullSecrets) == 0 {
		return nil
	}
	c := &watches.ImagesConfig{Registry: f.registry, PullSecrets: f.pullSecrets}
	var errs []error
	watches.ValidateImages(c, func(field, format string, args ...any) {
		flagName := map[string]string{"images.registry": "--image-registry", "images.pullSecrets": "--image-pull-secret"}[field]
		errs = append(errs, fmt.Errorf("%s: %s", flagName, fmt.Sprintf(format, args...)))
	})
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i := range ws {
		if ws[i].Images == nil {
			ws[i].Images = c
		}
	}
	return nil
}

// imagesCommand lists the images the watched charts release, rendered
// with their defaults and each sample; with --relocated, each beside its
// mirror name.
func imagesCommand(args []string, stdout, stderr io.Writer) int {
	fs := apps.NewFlagSet("images", stderr)
	watchesFile := fs.String("watches-file", "watches.yaml", "path of watches.yaml")
	dir := fs.String("config-dir", "config", "kustomize config directory (its samples/ are rendered too)")
	relocated := fs.Bool("relocated", false, `print "image mirror-image" pairs for the watches' images settings (for a mirroring script)`)
	var imgs imageFlags
	imgs.bind(fs)
	apps.BindFlags(fs)
	if code, ok := apps.ParseFlags(fs, args); !ok {
		return code
	}
	ws, err := watches.Load(*watchesFile)
	if err != nil {
		return reportError(stderr, "chartkeeper images", &ConfigError{File: *watchesFile, Err: err})
	}
	if err := imgs.apply(ws); err != nil {
		fmt.Fprintf(stderr, "chartkeeper images: %v\n", err)
		return ExitConfig
	}
	reg, err := newRegistry(ws)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper images: %v\n", err)
		return ExitConfig
	}
	lines, err := listImages(ws, reg, filepath.Join(*dir, "samples"), *relocated)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper images: %v\n", err)
		return ExitFailure
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return ExitOK
}

// listImages renders every watch's chart and returns its images and those
// its Go hooks add, sorted and unique, or "image mirror-image" lines.
func listImages(ws []watches.Watch, reg *hooks.Registry, samplesDir string, relocated bool) ([]string, error) {
	samples, err := manifests.ReadSamples(samplesDir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, w := range ws {
		renders, err := manifests.Render(w, samples)
		if err != nil {
			return nil, err
		}
		found := reg.Images(w.GroupVersionKind().GroupKind())
		for _, r := range renders {
			for _, obj := range r.Objects {
				found = append(found, images.Images(obj)...)
			}
		}
		for _, img := range found {
			line := img
			if relocated {
				if w.Images == nil || w.Images.Registry == "" {
					return nil, fmt.Errorf("%s: --relocated needs a registry: the watch's images.registry or --image-registry", w)
				}
				moved, err := images.Rewrite(img, w.Images.Registry)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", w, err)
				}
				line = img + " " + moved
			}
			seen[line] = true
		}
	}
	out := make([]string, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	sort.Strings(out)
	return out, nil
}
