package release

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// observedObject is one released object of the latest revision and its
// readiness, as a step found them (Observation.Objects).
type observedObject struct {
	object
	state api.ObjectState
	// why is the readiness check's line ("<Kind> <name>: ..."), empty when ready.
	why string
	// cause: what the Pods of this workload, not ready, say (in why too);
	// recheck: when they are read again (podreasons.go). Empty and zero
	// for any other object.
	cause   string
	recheck time.Time
}

// observed is the readiness of an object that exists.
func observed(ob object, r readyAt) observedObject {
	switch {
	case r.current:
		return observedObject{object: ob, state: api.ObjectReady}
	case r.failed:
		return observedObject{object: ob, state: api.ObjectFailed, why: r.why, cause: r.cause, recheck: r.recheck}
	}
	return observedObject{object: ob, state: api.ObjectNotReady, why: r.why, cause: r.cause, recheck: r.recheck}
}

// takeInventory writes status.inventory from the objects this step looked
// at, if it looked at them (docs/status-history.md). Only what the
// objects are and how ready they are goes in, nothing that moves with
// every look: an unchanged release gives an equal inventory, so a steady
// release writes no status; a changed one is written with the next status
// write (the controller holds a status whose conditions are only reworded
// and whose inventory alone changed, as it holds a rewording).
func (s *step) takeInventory() {
	if s.o.Objects == nil || s.o.Latest == nil {
		return
	}
	s.st.Inventory = inventoryOf(s.o.Latest.Version, s.o.Objects)
}

// inventoryOf lists a revision's objects within the bounds of
// api.Inventory: every object counted; listed worst state first (then by
// kind, namespace and name), at most api.MaxInventoryEntries and only as
// many as fit in api.MaxInventoryBytes of JSON, each message cut to
// api.MaxObjectMessage bytes.
func inventoryOf(revision int, objs []observedObject) *api.Inventory {
	inv := &api.Inventory{Revision: revision, Total: len(objs)}
	rank := map[api.ObjectState]int{}
	for i, st := range api.ObjectStates() {
		rank[st] = i
	}
	sorted := slices.Clone(objs)
	slices.SortStableFunc(sorted, func(a, b observedObject) int {
		return cmp.Or(cmp.Compare(rank[a.state], rank[b.state]), cmp.Compare(a.GVK.Kind, b.GVK.Kind),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	size, full := 160, false // the counts and the keys around them, with room to spare
	for _, ob := range sorted {
		if ob.state == api.ObjectReady {
			inv.Ready++
		} else {
			inv.NotReady++
		}
		if full = full || len(inv.Entries) == api.MaxInventoryEntries; full {
			continue
		}
		e := entryOf(ob)
		b, _ := json.Marshal(e)
		if full = size+len(b)+1 > api.MaxInventoryBytes; full {
			continue
		}
		size += len(b) + 1
		inv.Entries = append(inv.Entries, e)
	}
	inv.Omitted = inv.Total - len(inv.Entries)
	return inv
}

// entryOf is an object's inventory entry; its message is the readiness
// check's, less the object's name it starts with.
func entryOf(ob observedObject) api.InventoryEntry {
	msg := strings.TrimPrefix(ob.why, ob.GVK.Kind+" "+ob.Name+": ")
	return api.InventoryEntry{APIVersion: ob.GVK.GroupVersion().String(), Kind: ob.GVK.Kind, Namespace: ob.Namespace,
		Name: ob.Name, State: ob.state, Message: shorten(msg, api.MaxObjectMessage, "…")}
}
