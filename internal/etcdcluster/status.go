package etcdcluster

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// AppStatus is what the hook keeps in the custom resource's status.app.
type AppStatus struct {
	Phase   Phase  `json:"phase,omitempty"`
	Message string `json:"message,omitempty"`
	// Health: Healthy (every member healthy), Degraded (a leader, some
	// members not healthy), Unavailable (no leader), Unknown (etcd did not
	// answer the operator).
	Health  string         `json:"health,omitempty"`
	Leader  string         `json:"leader,omitempty"`
	Version string         `json:"version,omitempty"`
	Members []MemberStatus `json:"members,omitempty"`
	// Volumes are the claims members were first seen healthy on, to
	// notice a lost volume.
	Volumes             map[string]VolumeRecord `json:"volumes,omitempty"`
	LastBackup          *BackupRecord           `json:"lastBackup,omitempty"`
	LastScheduledBackup string                  `json:"lastScheduledBackup,omitempty"`
	// BackupRequest is the last backup annotation value acted on.
	BackupRequest string `json:"backupRequest,omitempty"`
	BackupError   string `json:"backupError,omitempty"`
}

// MemberStatus is one member as etcd reports it.
type MemberStatus struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	Healthy bool   `json:"healthy"`
	Leader  bool   `json:"leader,omitempty"`
	Version string `json:"version,omitempty"`
	// ClientURL is where the member serves clients.
	ClientURL string `json:"clientURL,omitempty"`
	Error     string `json:"error,omitempty"`
}

var appKeys = []string{"phase", "message", "health", "leader", "version", "members", "volumes", "lastBackup", "lastScheduledBackup", "backupRequest", "backupError"}

// readApp decodes the hook's part of status.app.
func readApp(app map[string]any) AppStatus {
	var s AppStatus
	part := map[string]any{}
	for _, k := range appKeys {
		if v, ok := app[k]; ok {
			part[k] = v
		}
	}
	if b, err := json.Marshal(part); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// writeApp replaces the hook's part of status.app, leaving other hooks'
// keys alone.
func writeApp(app map[string]any, s AppStatus) {
	if app == nil {
		return
	}
	for _, k := range appKeys {
		delete(app, k)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		for k, v := range m {
			app[k] = v
		}
	}
}

// describe fills the cluster part of the status from an observation.
func describe(s *AppStatus, o Observed, a Addressing, p Plan) {
	s.Phase, s.Message = p.Phase, p.Message
	s.Members, s.Leader = nil, ""
	if o.Set == nil {
		s.Health, s.Version = "Unknown", ""
		return
	}
	if o.Reach != nil {
		s.Health = "Unknown"
		return
	}
	v := newView(o, a)
	var versions []string
	for _, m := range o.Members {
		ms := MemberStatus{Name: m.Name, ID: fmt.Sprintf("%x", m.ID)}
		if len(m.ClientURLs) > 0 {
			ms.ClientURL = m.ClientURLs[0]
		}
		if i := ordinalOf(a, m, len(o.Members)+o.Set.Replicas+8); i >= 0 {
			ms.Name = a.MemberName(i)
		}
		st, ok := o.Status[m.ID]
		switch {
		case !m.Started():
			ms.Error = "not started"
		case !ok:
			ms.Error = "no status"
		case st.Err != nil:
			ms.Error = st.Err.Error()
		default:
			ms.Healthy, ms.Version = st.Healthy(), st.Version
			ms.Leader = st.Leader == m.ID
			if len(st.Errors) > 0 {
				ms.Error = fmt.Sprint(st.Errors)
			}
			if ms.Version != "" {
				versions = append(versions, ms.Version)
			}
		}
		if ms.Leader {
			s.Leader = ms.Name
		}
		s.Members = append(s.Members, ms)
	}
	slices.SortFunc(s.Members, func(x, y MemberStatus) int { return compareNames(x.Name, y.Name) })
	switch {
	case v.leader == 0:
		s.Health = "Unavailable"
	case v.healthy():
		s.Health = "Healthy"
	default:
		s.Health = "Degraded"
	}
	// The cluster runs the oldest version any member runs.
	if len(versions) > 0 {
		slices.SortFunc(versions, compareVersions)
		s.Version = versions[0]
	}
}

func compareNames(x, y string) int {
	if len(x) != len(y) {
		return len(x) - len(y)
	}
	return cmp.Compare(x, y)
}

// compareVersions orders "3.6.16" before "3.7.0".
func compareVersions(x, y string) int {
	var a, b [3]int
	fmt.Sscanf(x, "%d.%d.%d", &a[0], &a[1], &a[2])
	fmt.Sscanf(y, "%d.%d.%d", &b[0], &b[1], &b[2])
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}
