package controller

import (
	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// sourceRefs is who takes values from which ConfigMap or Secret
// (valuesFrom): each resource's objects, and each object's resources. An
// object is watched while at least one resource uses it.
type sourceRefs struct {
	byResource map[release.Resource]map[watches.SourceObject]bool
	byObject   map[watches.SourceObject]map[release.Resource]bool
}

func newSourceRefs() sourceRefs {
	return sourceRefs{
		byResource: map[release.Resource]map[watches.SourceObject]bool{},
		byObject:   map[watches.SourceObject]map[release.Resource]bool{},
	}
}

// set records that r uses objs now, replacing what it used before (none:
// it uses nothing any more). It returns the objects nobody used before
// (to watch from now on) and those nobody uses any more (to stop watching).
func (t sourceRefs) set(r release.Resource, objs []watches.SourceObject) (added, dropped []watches.SourceObject) {
	before := t.byResource[r]
	if sameObjects(before, objs) {
		return nil, nil
	}
	now := make(map[watches.SourceObject]bool, len(objs))
	for _, o := range objs {
		if now[o] {
			continue
		}
		now[o] = true
		if !before[o] {
			if len(t.byObject[o]) == 0 {
				added = append(added, o)
				t.byObject[o] = map[release.Resource]bool{}
			}
			t.byObject[o][r] = true
		}
	}
	for o := range before {
		if now[o] {
			continue
		}
		delete(t.byObject[o], r)
		if len(t.byObject[o]) == 0 {
			delete(t.byObject, o)
			dropped = append(dropped, o)
		}
	}
	if len(now) == 0 {
		delete(t.byResource, r)
	} else {
		t.byResource[r] = now
	}
	return added, dropped
}

// users returns the resources that use obj.
func (t sourceRefs) users(obj watches.SourceObject) []release.Resource {
	out := make([]release.Resource, 0, len(t.byObject[obj]))
	for r := range t.byObject[obj] {
		out = append(out, r)
	}
	return out
}

// sameObjects reports whether objs (duplicates allowed) is exactly the set.
func sameObjects(set map[watches.SourceObject]bool, objs []watches.SourceObject) bool {
	n := 0
	for i, o := range objs {
		if !set[o] {
			return false
		}
		if !containsBefore(objs, i) {
			n++
		}
	}
	return n == len(set)
}

// containsBefore reports whether objs[i] is also among objs[:i].
func containsBefore(objs []watches.SourceObject, i int) bool {
	for _, o := range objs[:i] {
		if o == objs[i] {
			return true
		}
	}
	return false
}
