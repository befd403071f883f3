package helm

import (
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Capabilities are the cluster's version and API list as the client's
// renders see them (cached for CapabilitiesTTL): what the CRD step renders
// a chart's defaults with, as an install would.
func (c *Client) Capabilities() (*chartutil.Capabilities, error) { return c.capabilities() }

func (c *Client) capabilities() (*chartutil.Capabilities, error) {
	c.capsMu.Lock()
	defer c.capsMu.Unlock()
	if c.caps != nil && time.Since(c.capsAt) < CapabilitiesTTL {
		return c.caps, nil
	}
	caps, err := c.capsFor()
	if err != nil {
		return nil, fmt.Errorf("reading cluster capabilities: %w", err)
	}
	c.caps, c.capsAt = caps, time.Now()
	return caps, nil
}

// discoverCapabilities reads the server version and API list, as Helm does.
func (c *Client) discoverCapabilities() (*chartutil.Capabilities, error) {
	dc := c.getter.discovery
	dc.Invalidate()
	sv, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	kv, err := chartutil.ParseKubeVersion(sv.GitVersion)
	if err != nil {
		return nil, err
	}
	apis, err := action.GetVersionSet(dc)
	if err != nil {
		return nil, err
	}
	return &chartutil.Capabilities{KubeVersion: *kv, APIVersions: apis, HelmVersion: chartutil.DefaultCapabilities.HelmVersion}, nil
}
