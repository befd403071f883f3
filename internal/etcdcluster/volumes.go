package etcdcluster

import "fmt"

// VolumeRecord ties a member to the volume it was first seen healthy on.
type VolumeRecord struct {
	// Member is the member's etcd ID (hex).
	Member string `json:"member"`
	// Volume is the UID of its PersistentVolumeClaim then.
	Volume string `json:"volume"`
}

// RecordVolumes returns the volume record to keep after an observation. A
// member's volume is recorded the first time the member (by its etcd ID)
// is seen healthy, and not changed while the ID stays: a member's data
// cannot move to another claim, so a different claim under the same ID
// later means the volume was lost. (The old process may still answer for
// a moment after its claim was replaced; this is why healthy members do not
// simply refresh their record.) Members no longer in the cluster are
// dropped. Without an answer from etcd the record is kept as it is.
func RecordVolumes(o Observed, a Addressing, prev map[string]VolumeRecord) map[string]VolumeRecord {
	if o.Set == nil || o.Reach != nil || len(o.Members) == 0 {
		return prev
	}
	v := newView(o, a)
	out := make(map[string]VolumeRecord, len(v.ords))
	for _, i := range v.ords {
		name, id := a.MemberName(i), fmt.Sprintf("%x", v.byOrd[i].ID)
		switch cur := o.Set.pod(i).Volume; {
		case prev[name].Member == id:
			out[name] = prev[name]
		case v.memberHealthy(i) && cur != "":
			out[name] = VolumeRecord{Member: id, Volume: cur}
		}
	}
	return out
}

// volumeLost: member i's record is for its current ID and names another
// claim than the one its Pod has now.
func (v view) volumeLost(i int) bool {
	rec, ok := v.o.Volumes[v.a.MemberName(i)]
	return ok && rec.Volume != "" && rec.Member == fmt.Sprintf("%x", v.byOrd[i].ID) && rec.Volume != v.o.Set.pod(i).Volume
}
