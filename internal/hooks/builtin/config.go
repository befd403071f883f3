package builtin

import (
	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// FromWatch returns the built-in hooks a watch turns on in watches.yaml, in
// the order they run: credentials, TLS, status fields.
func FromWatch(w watches.Watch) []hooks.Hook {
	c := w.Hooks
	if c == nil {
		return nil
	}
	var out []hooks.Hook
	if cc := c.Credentials; cc != nil {
		out = append(out, hooks.Hook{Name: "credentials", Impl: &Credentials{Keys: cc.Keys, Length: cc.Length, ValuesKey: cc.ValuesKey}})
	}
	if tc := c.TLS; tc != nil {
		t := &TLS{Peer: tc.Peer, Client: tc.Client, RenewAt: tc.RenewAt, ValuesKey: tc.ValuesKey}
		if tc.Lifetime != nil {
			t.Lifetime = tc.Lifetime.Duration
		}
		out = append(out, hooks.Hook{Name: "tls", Impl: t})
	}
	if len(c.StatusFields) > 0 {
		sf := &StatusFields{}
		for _, f := range c.StatusFields {
			sf.Fields = append(sf.Fields, StatusField{Name: f.Name, Kind: f.Kind, Object: f.Object, Path: f.Path})
		}
		out = append(out, hooks.Hook{Name: "status-fields", Impl: sf})
	}
	return out
}
