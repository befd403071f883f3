package release

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/values"
)

// maxDeployedManifest bounds status.deployedRelease.manifest, in bytes:
// the predecessors write the whole manifest, and a large release made
// their status write fail (an object in etcd is at most 1.5 MiB).
const maxDeployedManifest = 256 << 10

// deployedManifest is a release's manifest as status.deployedRelease
// keeps it: the data of Secrets replaced by values.Redacted (the
// predecessors copied it, readable by whoever may read the resource), the
// values the chart's schema marks secret redacted, and whole documents
// only, up to maxDeployedManifest bytes, then a comment saying how much
// was left out and where to read it all.
func deployedManifest(manifest string, redact *values.Redactor, name, ns string) string {
	docs := manifestDocuments(manifest)
	var b strings.Builder
	for i, doc := range docs {
		doc = redact.Redact(secretRedacted(doc))
		if b.Len()+len(doc) > maxDeployedManifest {
			fmt.Fprintf(&b, "---\n# chartkeeper: %d of %d documents left out (at most %d bytes are kept here); helm get manifest %s -n %s prints them all\n",
				len(docs)-i, len(docs), maxDeployedManifest, name, ns)
			break
		}
		b.WriteString(doc)
	}
	return b.String()
}

// manifestDocuments splits a rendered manifest at its "---" lines, each
// document keeping its separator line.
func manifestDocuments(manifest string) []string {
	var docs []string
	start := 0
	for i := 0; i < len(manifest); {
		end := strings.IndexByte(manifest[i:], '\n')
		line := manifest[i:]
		next := len(manifest)
		if end >= 0 {
			line, next = manifest[i:i+end], i+end+1
		}
		if strings.TrimRight(line, " \t\r") == "---" && i > start {
			docs = append(docs, manifest[start:i])
			start = i
		}
		i = next
	}
	if start < len(manifest) {
		docs = append(docs, manifest[start:])
	}
	return docs
}

// secretRedacted returns doc with the values of a v1 Secret's data and
// stringData replaced by values.Redacted (the keys stay); any other
// document as it is. The Secret is written again as YAML after its
// leading separator and comment lines (# Source: ...).
func secretRedacted(doc string) string {
	if !strings.Contains(doc, "Secret") {
		return doc
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj["kind"] != "Secret" || obj["apiVersion"] != "v1" {
		return doc
	}
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k := range m {
				m[k] = values.Redacted
			}
		}
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return doc
	}
	var head strings.Builder
	for _, line := range strings.SplitAfter(doc, "\n") {
		if t := strings.TrimSpace(line); t != "---" && !strings.HasPrefix(t, "#") {
			break
		}
		head.WriteString(line)
	}
	return head.String() + string(out)
}
