package etcdcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Member is one etcd member as the cluster lists it.
type Member struct {
	ID         uint64
	Name       string // empty until the member has started and joined
	PeerURLs   []string
	ClientURLs []string
}

// Started reports whether the member has joined (an added member has no
// name until its process starts).
func (m Member) Started() bool { return m.Name != "" }

// EndpointStatus is one member's own account of itself.
type EndpointStatus struct {
	MemberID uint64
	Leader   uint64 // 0: the member sees no leader
	Version  string
	DBSize   int64
	Revision int64
	// Errors are the member's alarms and raft errors.
	Errors []string
	// Err is set when the member did not answer.
	Err error
}

// Healthy: the member answered, sees a leader and reports no errors.
func (s EndpointStatus) Healthy() bool { return s.Err == nil && s.Leader != 0 && len(s.Errors) == 0 }

// Snapshot is a point-in-time copy of the keyspace being streamed.
type Snapshot struct {
	io.ReadCloser
	// Version is the etcd version that produced it (the server's, or a
	// member's when the server does not say yet).
	Version string
}

// Client is how the hook reaches one etcd cluster. Implementations must be
// safe for one goroutine; errors are the etcd API's.
type Client interface {
	// Members lists the cluster's members (a linearizable read: it fails
	// without quorum).
	Members(ctx context.Context) ([]Member, error)
	// AddMember adds a voting member that will be reachable at peerURL.
	AddMember(ctx context.Context, peerURL string) (Member, error)
	// RemoveMember removes a member by ID.
	RemoveMember(ctx context.Context, id uint64) error
	// Status asks the member serving clientURL about itself.
	Status(ctx context.Context, clientURL string) EndpointStatus
	// Snapshot streams a snapshot from one of the endpoints.
	Snapshot(ctx context.Context) (Snapshot, error)
	// Close releases the connection.
	Close() error
}

// Dialer connects to a cluster through the given client URLs.
type Dialer func(ctx context.Context, endpoints []string, tlsConfig *tls.Config) (Client, error)

// DialTimeout bounds connecting to a cluster.
const DialTimeout = 3 * time.Second

// Dial is the Dialer of the etcd Go client (go.etcd.io/etcd/client/v3).
func Dial(ctx context.Context, endpoints []string, tlsConfig *tls.Config) (Client, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("no etcd endpoints")
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints: endpoints, TLS: tlsConfig, DialTimeout: DialTimeout, Context: ctx,
		Logger: zap.NewNop(), RejectOldCluster: false,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %v: %w", endpoints, err)
	}
	return &v3Client{c: c}, nil
}

type v3Client struct{ c *clientv3.Client }

func (v *v3Client) Members(ctx context.Context) ([]Member, error) {
	resp, err := v.c.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	out := make([]Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		out = append(out, Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs})
	}
	return out, nil
}

func (v *v3Client) AddMember(ctx context.Context, peerURL string) (Member, error) {
	resp, err := v.c.MemberAdd(ctx, []string{peerURL})
	if err != nil {
		return Member{}, fmt.Errorf("adding member %s: %w", peerURL, err)
	}
	m := resp.Member
	return Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs}, nil
}

// RemoveMember asks the other members to remove id: the member being
// removed stops its server once the removal applies, and can answer
// "server stopped" for a removal that went through. An error is checked
// against the member list, so such a removal counts as done.
func (v *v3Client) RemoveMember(ctx context.Context, id uint64) error {
	if list, err := v.c.MemberList(ctx); err == nil {
		var others []string
		for _, m := range list.Members {
			if m.ID != id {
				others = append(others, m.ClientURLs...)
			}
		}
		if len(others) > 0 {
			v.c.SetEndpoints(others...)
		}
	}
	if _, err := v.c.MemberRemove(ctx, id); err != nil {
		if list, lerr := v.c.MemberList(ctx); lerr == nil && !slices.ContainsFunc(list.Members, func(m *etcdserverpb.Member) bool { return m.ID == id }) {
			return nil
		}
		return fmt.Errorf("removing member %x: %w", id, err)
	}
	return nil
}

func (v *v3Client) Status(ctx context.Context, clientURL string) EndpointStatus {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	resp, err := v.c.Status(ctx, clientURL)
	if err != nil {
		return EndpointStatus{Err: err}
	}
	s := EndpointStatus{MemberID: resp.Header.MemberId, Leader: resp.Leader, Version: resp.Version,
		DBSize: resp.DbSize, Revision: resp.Header.Revision, Errors: resp.Errors}
	return s
}

func (v *v3Client) Snapshot(ctx context.Context) (Snapshot, error) {
	resp, err := v.c.SnapshotWithVersion(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("starting snapshot: %w", err)
	}
	version := resp.Version
	// A cluster that just formed may not name its version in the stream
	// yet (its cluster version is not settled); the members' own do.
	for _, ep := range v.c.Endpoints() {
		if version != "" {
			break
		}
		if st := v.Status(ctx, ep); st.Err == nil {
			version = st.Version
		}
	}
	return Snapshot{ReadCloser: resp.Snapshot, Version: version}, nil
}

func (v *v3Client) Close() error { return v.c.Close() }
