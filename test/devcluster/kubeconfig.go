package devcluster

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName is the kubeconfig context (and cluster) name of a dev cluster.
const contextName = "chartkeeper-local"

func (c *Cluster) serverURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.state.Ports.APIServer)
}

// writeKubeconfigs writes one self-contained kubeconfig per client
// identity: admin (for people and tests), controller-manager, scheduler, kwok.
func (c *Cluster) writeKubeconfigs() error {
	ca, err := c.pki.readFile("ca.crt")
	if err != nil {
		return err
	}
	for _, who := range []string{"admin", "controller-manager", "scheduler", "kwok"} {
		crt, err := c.pki.readFile(who + ".crt")
		if err != nil {
			return err
		}
		key, err := c.pki.readFile(who + ".key")
		if err != nil {
			return err
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: c.serverURL(), CertificateAuthorityData: ca}
		cfg.AuthInfos[who] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
		cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: who, Namespace: "default"}
		cfg.CurrentContext = contextName
		if err := clientcmd.WriteToFile(*cfg, c.path(who+".kubeconfig")); err != nil {
			return err
		}
	}
	return nil
}
