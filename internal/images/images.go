package images

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distribution/reference"
)

// podSpecPaths are where objects hold a Pod spec, by kind; other kinds
// with spec.template.spec.containers are found too.
var podSpecPaths = map[string][]string{
	"Pod":     {"spec"},
	"CronJob": {"spec", "jobTemplate", "spec", "template", "spec"},
}

// PodSpecs returns the Pod specs inside a rendered object (as maps of
// the object, so that edits land in it).
func PodSpecs(obj map[string]any) []map[string]any {
	kind, _ := obj["kind"].(string)
	path, ok := podSpecPaths[kind]
	if !ok {
		path = []string{"spec", "template", "spec"}
	}
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	if _, ok := cur["containers"].([]any); !ok {
		return nil
	}
	return []map[string]any{cur}
}

var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// Images returns the images an object's Pods run, in order, without
// duplicates.
func Images(obj map[string]any) []string {
	var out []string
	for _, spec := range PodSpecs(obj) {
		for _, list := range containerLists {
			cs, _ := spec[list].([]any)
			for _, c := range cs {
				m, _ := c.(map[string]any)
				if img, ok := m["image"].(string); ok && img != "" && !slices.Contains(out, img) {
					out = append(out, img)
				}
			}
		}
	}
	return out
}

// Relocation sends a release's images to a mirror.
type Relocation struct {
	// Registry is the mirror, host[:port] with an optional path prefix
	// (mirror.internal:5000/dockerhub). An image keeps its repository path
	// and tag or digest: docker.io/library/nginx:1.27 becomes
	// mirror.internal:5000/dockerhub/library/nginx:1.27.
	Registry string
	// PullSecrets are added to each Pod's imagePullSecrets (once each).
	PullSecrets []string
}

// Rewrite returns image as pulled from registry.
func Rewrite(image, registry string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", image, err)
	}
	registry = strings.TrimSuffix(registry, "/")
	if strings.HasPrefix(named.Name(), registry+"/") {
		return image, nil // already from the mirror
	}
	out := registry + "/" + reference.Path(named)
	if t, ok := named.(reference.Tagged); ok {
		out += ":" + t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		out += "@" + d.Digest().String()
	}
	return out, nil
}

// Apply relocates the images of an object's Pods and adds the pull
// secrets. An image that is not a valid reference is an error.
func (r Relocation) Apply(obj map[string]any) error {
	for _, spec := range PodSpecs(obj) {
		if r.Registry != "" {
			for _, list := range containerLists {
				cs, _ := spec[list].([]any)
				for _, c := range cs {
					m, _ := c.(map[string]any)
					img, ok := m["image"].(string)
					if !ok || img == "" {
						continue
					}
					moved, err := Rewrite(img, r.Registry)
					if err != nil {
						return err
					}
					m["image"] = moved
				}
			}
		}
		secrets, _ := spec["imagePullSecrets"].([]any)
		for _, name := range r.PullSecrets {
			if !slices.ContainsFunc(secrets, func(s any) bool {
				m, _ := s.(map[string]any)
				return m["name"] == name
			}) {
				secrets = append(secrets, map[string]any{"name": name})
			}
		}
		if len(secrets) > 0 {
			spec["imagePullSecrets"] = secrets
		}
	}
	return nil
}
