package kubeops

import (
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are the clients of one kubeconfig: typed and dynamic.
type Clients struct {
	Config  *rest.Config
	Typed   kubernetes.Interface
	Dynamic dynamic.Interface
}

// Connect builds Clients from a kubeconfig file with the given client-side
// rate limit (qps, and burst = 2 qps) and request timeout (0: none).
func Connect(kubeconfig string, qps float32, timeout time.Duration) (Clients, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return Clients{}, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = qps, int(2*qps), timeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	return Clients{Config: cfg, Typed: cs, Dynamic: dyn}, nil
}
