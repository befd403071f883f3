package helm

import "helm.sh/helm/v3/pkg/chartutil"

// Capabilities are the cluster's version and API list as the client's
// renders see them (cached for CapabilitiesTTL): what the CRD step renders
// a chart's defaults with, as an install would.
func (c *Client) Capabilities() (*chartutil.Capabilities, error) { return c.capabilities() }
