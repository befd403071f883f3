package watches

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// HookConfig turns on chartkeeper's built-in Go hooks for a watch. They run
// before any hook registered in Go for the kind.
type HookConfig struct {
	// Credentials keeps a Secret of generated credentials per resource.
	Credentials *CredentialsConfig `json:"credentials,omitempty"`
	// TLS keeps a CA and certificates per release.
	TLS *TLSConfig `json:"tls,omitempty"`
	// StatusFields copies fields of released objects into status.app.
	StatusFields []StatusFieldConfig `json:"statusFields,omitempty"`
}

// CredentialsConfig configures the credentials hook (defaults in docs/hooks.md).
type CredentialsConfig struct {
	Keys      []string `json:"keys,omitempty"`
	Length    int      `json:"length,omitempty"`
	ValuesKey string   `json:"valuesKey,omitempty"`
}

// TLSConfig configures the TLS hook.
type TLSConfig struct {
	Peer      bool             `json:"peer,omitempty"`
	Client    bool             `json:"client,omitempty"`
	Lifetime  *metav1.Duration `json:"lifetime,omitempty"`
	RenewAt   float64          `json:"renewAt,omitempty"`
	ValuesKey string           `json:"valuesKey,omitempty"`
}

// StatusFieldConfig is one field copied into status.app.
type StatusFieldConfig struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Object string `json:"object,omitempty"`
	Path   string `json:"path"`
}

func (h *HookConfig) validate(add func(field, format string, args ...any)) {
	if h == nil {
		return
	}
	if c := h.Credentials; c != nil && c.Length < 0 {
		add("hooks.credentials.length", "must not be negative, got %d", c.Length)
	}
	if t := h.TLS; t != nil {
		if t.RenewAt < 0 || t.RenewAt >= 1 {
			add("hooks.tls.renewAt", "must be a fraction between 0 and 1 (0: the default 2/3), got %v", t.RenewAt)
		}
		if t.Lifetime != nil && t.Lifetime.Duration <= 0 {
			add("hooks.tls.lifetime", "must be positive, got %s", t.Lifetime.Duration)
		}
	}
	for i, f := range h.StatusFields {
		if f.Name == "" || f.Kind == "" || f.Path == "" {
			add("hooks.statusFields", "entry %d needs name, kind and path", i)
		}
	}
}
