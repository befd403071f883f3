package helm

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter gives Helm's kube client the operator's REST configuration and
// shared, memory-cached discovery and REST mapping, scoped to a namespace.
type restGetter struct {
	cfg       *rest.Config
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.ResettableRESTMapper
	namespace string
}

func newRESTGetter(cfg *rest.Config) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	return &restGetter{cfg: cfg, discovery: cached, mapper: newMemoMapper(restmapper.NewDeferredDiscoveryRESTMapper(cached))}, nil
}

// inNamespace returns a getter that shares the caches but defaults to ns.
func (g *restGetter) inNamespace(ns string) *restGetter {
	c := *g
	c.namespace = ns
	return &c
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.mapper, nil }

func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Contexts["operator"] = &clientcmdapi.Context{Namespace: g.namespace}
	cfg.CurrentContext = "operator"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{})
}

// Mapper returns the shared REST mapper (for scope look-ups by callers);
// nil for an offline Client.
func (c *Client) Mapper() meta.RESTMapper {
	if c.getter == nil {
		return nil
	}
	return c.getter.mapper
}
