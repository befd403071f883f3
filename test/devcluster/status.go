package devcluster

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
)

// ComponentStatus is what Status reports about one component.
type ComponentStatus struct {
	Name    string
	PID     int
	Running bool
	Healthy bool
	Detail  string
}

// Status reports each component of the cluster in dir: whether the recorded
// process runs and whether it answers its health check. exists is false
// when dir holds no cluster.
func Status(ctx context.Context, dir string) (out []ComponentStatus, exists bool, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, false, err
	}
	st, exists, err := loadState(dir)
	if err != nil || !exists {
		return nil, exists, err
	}
	c := &Cluster{cfg: Config{Dir: dir}, pki: pki{dir: dir}, state: st}
	for _, comp := range components {
		p, recorded := st.Procs[comp.name]
		s := ComponentStatus{Name: comp.name, PID: p.PID, Running: recorded && p.Alive()}
		switch {
		case !recorded:
			s.Detail = "stopped"
		case !s.Running:
			s.Detail = "exited"
		default:
			h := comp.health(c)
			if err := c.probe(ctx, h); err != nil {
				s.Detail = err.Error()
			} else {
				s.Healthy, s.Detail = true, h.url
			}
		}
		out = append(out, s)
	}
	return out, true, nil
}

// PrintStatus writes Status as a table.
func PrintStatus(w io.Writer, sts []ComponentStatus) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tPID\tRUNNING\tHEALTHY\tDETAIL")
	for _, s := range sts {
		pid := "-"
		if s.PID > 0 {
			pid = fmt.Sprint(s.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%s\n", s.Name, pid, s.Running, s.Healthy, s.Detail)
	}
	tw.Flush()
}
