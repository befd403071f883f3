package etcdcluster

// RecordVolumes returns the volume record to keep after an observation:
// healthy members get their PVC's current UID; members that are not
// healthy keep what was recorded (so a volume replaced under a member is
// noticed); members no longer in the cluster are dropped. Without an
// answer from etcd the record is kept as it is.
func RecordVolumes(o Observed, a Addressing, prev map[string]string) map[string]string {
	if o.Set == nil || o.Reach != nil || len(o.Members) == 0 {
		return prev
	}
	v := newView(o, a)
	out := make(map[string]string, len(v.ords))
	for _, i := range v.ords {
		name := a.MemberName(i)
		switch cur := o.Set.pod(i).Volume; {
		case v.memberHealthy(i) && cur != "":
			out[name] = cur
		case prev[name] != "":
			out[name] = prev[name]
		}
	}
	return out
}
