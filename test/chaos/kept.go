package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// resourcePolicy is Helm's annotation for objects an uninstall leaves.
const resourcePolicy = "helm.sh/resource-policy"

// kept reports whether o is marked to outlive its release (read as Helm
// reads it: trimmed, any case).
func kept(o metav1.Object) bool {
	return strings.EqualFold(strings.TrimSpace(o.GetAnnotations()[resourcePolicy]), "keep")
}

// keptTracker remembers every kept object it has seen, by UID: a kept
// object must never be deleted, by an upgrade, a rollback, an uninstall, a
// prune or an operator killed in the middle of one. It looks every few
// seconds during the run and once more at each check; an object gone, or
// there under another UID (deleted and made again), is a problem.
type keptTracker struct {
	cs         kubernetes.Interface
	namespaces []string

	mu   sync.Mutex
	uids map[string]types.UID // namespace/name -> UID first seen
}

func newKeptTracker(cs kubernetes.Interface, namespaces []string) *keptTracker {
	return &keptTracker{cs: cs, namespaces: namespaces, uids: map[string]types.UID{}}
}

// run looks every interval until ctx ends (errors are skipped: the API
// server may be down; the next look catches up).
func (k *keptTracker) run(ctx context.Context, interval time.Duration) {
	for ctx.Err() == nil {
		_, _ = k.look(ctx)
		sleep(ctx, interval)
	}
}

// look records the kept objects not seen before and returns what it found
// now (namespace/name -> UID).
func (k *keptTracker) look(ctx context.Context) (map[string]types.UID, error) {
	now := map[string]types.UID{}
	for _, ns := range k.namespaces {
		list, err := k.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: api.LabelManaged + "=true"})
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			if cm := &list.Items[i]; kept(cm) {
				now[ns+"/"+cm.Name] = cm.UID
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for n, uid := range now {
		if _, ok := k.uids[n]; !ok {
			k.uids[n] = uid
		}
	}
	return now, nil
}

// count is the number of kept objects seen so far.
func (k *keptTracker) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.uids)
}

// check: every kept object seen is still there under its first UID, and
// every live resource of a kind with a kept object has it, holding what
// the chart says (a hand edit of it is drift, and corrected).
func (k *keptTracker) check(ctx context.Context, slots []slot) ([]Problem, error) {
	now, err := k.look(ctx)
	if err != nil {
		return nil, err
	}
	var out []Problem
	k.mu.Lock()
	names := make([]string, 0, len(k.uids))
	for n := range k.uids {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		switch uid, ok := now[n]; {
		case !ok:
			out = append(out, Problem{Subject: "ConfigMap " + n, What: "kept object deleted"})
		case uid != k.uids[n]:
			out = append(out, Problem{Subject: "ConfigMap " + n, What: fmt.Sprintf("kept object deleted and made again (UID %s, first %s)", uid, k.uids[n])})
		}
	}
	k.mu.Unlock()
	for _, s := range slots {
		if !s.live || !s.kind.kept {
			continue
		}
		n := s.key.Name + keptSuffix
		cm, err := k.cs.CoreV1().ConfigMaps(s.key.Namespace).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			out = append(out, Problem{Subject: s.key.String(), What: "kept ConfigMap " + n + ": " + err.Error()})
			continue
		}
		if want := s.key.Namespace + "-" + s.key.Name; cm.Data["clusterID"] != want {
			out = append(out, Problem{Subject: s.key.String(), What: fmt.Sprintf("kept ConfigMap %s holds %q, the chart says %q", n, cm.Data["clusterID"], want)})
		}
	}
	return out, nil
}
