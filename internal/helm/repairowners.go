package helm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"helm.sh/helm/v3/pkg/kube"
)

// writers is who wrote a part of a live object, from its managedFields:
// the field sets (fieldsV1, at the part's path) of this operator's field
// manager and those of every other manager. The repair merges away a list
// entry no revision names only when this operator alone wrote it.
type writers struct {
	ours, others []map[string]any
}

// fieldManager is the field manager of Helm's writes (Helm's own choice:
// kube.ManagedFieldsManager, else the program's name).
func fieldManager() string {
	if kube.ManagedFieldsManager != "" {
		return kube.ManagedFieldsManager
	}
	if os.Args[0] == "" {
		return "unknown"
	}
	return filepath.Base(os.Args[0])
}

// writersOf reads the managedFields of a live object (as JSON decodes it).
func writersOf(live map[string]any, manager string) writers {
	var w writers
	md, _ := live["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		fields, ok := m["fieldsV1"].(map[string]any)
		if !ok {
			continue
		}
		if m["manager"] == manager {
			w.ours = append(w.ours, fields)
		} else {
			w.others = append(w.others, fields)
		}
	}
	return w
}

// step returns the writers of a part of every set's part at this path
// (pick: the set's child, nil when it has none).
func (w writers) step(pick func(map[string]any) map[string]any) writers {
	var out writers
	for _, s := range w.ours {
		if c := pick(s); c != nil {
			out.ours = append(out.ours, c)
		}
	}
	for _, s := range w.others {
		if c := pick(s); c != nil {
			out.others = append(out.others, c)
		}
	}
	return out
}

// field: the writers of map key k.
func (w writers) field(k string) writers {
	return w.step(func(s map[string]any) map[string]any {
		c, _ := s["f:"+k].(map[string]any)
		return c
	})
}

// entry: the writers of a list entry (fieldsV1 k:{...}, the entry's
// list-map keys).
func (w writers) entry(e map[string]any) writers {
	return w.step(func(s map[string]any) map[string]any {
		for k, c := range s {
			if matchesKey(k, e) {
				m, _ := c.(map[string]any)
				if m == nil {
					m = map[string]any{}
				}
				return m
			}
		}
		return nil
	})
}

// matchesKey reports whether fieldsV1 key k (k:{"name":"web"}) names entry e.
func matchesKey(k string, e map[string]any) bool {
	js, ok := strings.CutPrefix(k, "k:")
	if !ok {
		return false
	}
	var key map[string]any
	if json.Unmarshal([]byte(js), &key) != nil || len(key) == 0 {
		return false
	}
	for f, v := range key {
		if !reflect.DeepEqual(e[f], v) {
			return false
		}
	}
	return true
}

// onlyOursEntry: this operator wrote the entry, and no one else did.
func (w writers) onlyOursEntry(e map[string]any) bool {
	n := w.entry(e)
	return len(n.ours) > 0 && len(n.others) == 0
}

// onlyOursValue: this operator wrote the value of a set (fieldsV1
// v:"value"), and no one else did.
func (w writers) onlyOursValue(v any) bool {
	js, err := json.Marshal(v)
	if err != nil {
		return false
	}
	n := w.step(func(s map[string]any) map[string]any {
		if _, ok := s["v:"+string(js)]; ok {
			return map[string]any{}
		}
		return nil
	})
	return len(n.ours) > 0 && len(n.others) == 0
}
