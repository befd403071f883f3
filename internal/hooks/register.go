package hooks

// Register is the one place where Go hooks are attached to kinds. Add a
// line per hook, in the order the hooks must run, e.g.
//
//	must(r.Add(schema.GroupKind{Group: "apps.chartkeeper.dev", Kind: "WebApp"},
//		Hook{Name: "credentials", Impl: &Credentials{}}))
//
// The bundled kinds need none yet.
func Register(r *Registry) error {
	return nil
}
