package etcdcluster

import (
	"context"
	"fmt"
)

// Survey asks the cluster for its members and each started member for its
// status. The error is etcd's when the member list cannot be read (no
// connection or no quorum).
func Survey(ctx context.Context, c Client) ([]Member, map[uint64]EndpointStatus, error) {
	ms, err := c.Members(ctx)
	if err != nil {
		return nil, nil, err
	}
	st := make(map[uint64]EndpointStatus, len(ms))
	for _, m := range ms {
		if !m.Started() || len(m.ClientURLs) == 0 {
			continue
		}
		st[m.ID] = c.Status(ctx, m.ClientURLs[0])
	}
	return ms, st, nil
}

// Apply makes the plan's membership change through etcd. deleteVolume is
// called first when the ordinal's old volume must go.
func Apply(ctx context.Context, c Client, a Addressing, p Plan, deleteVolume func(ctx context.Context, ordinal int) error) error {
	act := p.Action
	switch act.Kind {
	case ActionAdd:
		if act.DeleteVolume && deleteVolume != nil {
			if err := deleteVolume(ctx, act.Ordinal); err != nil {
				return fmt.Errorf("deleting the old volume of %s: %w", a.MemberName(act.Ordinal), err)
			}
		}
		_, err := c.AddMember(ctx, a.PeerURL(act.Ordinal))
		return err
	case ActionRemove:
		return c.RemoveMember(ctx, act.ID)
	}
	return nil
}
