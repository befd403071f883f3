package devcluster

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Network ranges of the simulated cluster. The service range is a /16 so
// that benchmarks with thousands of Services do not exhaust it.
const (
	serviceCIDR = "10.96.0.0/16"
	podCIDR     = "10.244.0.1/24"
	nodeIP      = "10.244.0.1"
)

// component is one control-plane process: how to start it and how to tell
// that it is healthy.
type component struct {
	name   string
	binary string
	args   func(c *Cluster) []string
	health func(c *Cluster) healthCheck
}

// components in start order; Down stops them in reverse.
var components = []component{
	{name: "etcd", binary: "etcd", args: etcdArgs, health: func(c *Cluster) healthCheck {
		return healthCheck{url: fmt.Sprintf("http://127.0.0.1:%d/health", c.state.Ports.Etcd), want: `"health":"true"`}
	}},
	{name: "kube-apiserver", binary: "kube-apiserver", args: apiserverArgs, health: func(c *Cluster) healthCheck {
		return healthCheck{url: c.serverURL() + "/readyz", admin: true}
	}},
	{name: "kube-controller-manager", binary: "kube-controller-manager", args: controllerManagerArgs, health: func(c *Cluster) healthCheck {
		return healthCheck{url: fmt.Sprintf("https://127.0.0.1:%d/healthz", c.state.Ports.ControllerManager)}
	}},
	{name: "kube-scheduler", binary: "kube-scheduler", args: schedulerArgs, health: func(c *Cluster) healthCheck {
		return healthCheck{url: fmt.Sprintf("https://127.0.0.1:%d/healthz", c.state.Ports.Scheduler)}
	}},
	{name: "kwok", binary: "kwok", args: kwokArgs, health: func(c *Cluster) healthCheck {
		return healthCheck{url: fmt.Sprintf("http://127.0.0.1:%d/healthz", c.state.Ports.Kwok)}
	}},
}

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.cfg.Dir}, elem...)...)
}

func etcdArgs(c *Cluster) []string {
	p := c.state.Ports
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.EtcdPeer)
	client := fmt.Sprintf("http://127.0.0.1:%d", p.Etcd)
	return []string{
		"--name=default",
		"--data-dir=" + c.path("etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", p.EtcdMetrics),
		"--unsafe-no-fsync=true", // a disposable dev/test cluster: speed over durability
		"--quota-backend-bytes=8589934592",
		"--log-level=warn",
	}
}

func apiserverArgs(c *Cluster) []string {
	k := c.pki.path
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.state.Ports.Etcd),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.state.Ports.APIServer),
		"--tls-cert-file=" + k("apiserver.crt"),
		"--tls-private-key-file=" + k("apiserver.key"),
		"--client-ca-file=" + k("ca.crt"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + k("sa.pub"),
		"--service-account-signing-key-file=" + k("sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		// A loopback advertise address makes the lease reconciler log an error on every sync.
		"--endpoint-reconciler-type=none",
		"--profiling=" + strconv.FormatBool(c.cfg.Profiling),
		"--v=0",
	}
}

func controllerManagerArgs(c *Cluster) []string {
	k := c.pki.path
	kc := c.path("controller-manager.kubeconfig")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.state.Ports.ControllerManager),
		"--cert-dir=" + c.path("controller-manager"),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + k("sa.key"),
		"--root-ca-file=" + k("ca.crt"),
		"--cluster-signing-cert-file=" + k("ca.crt"),
		"--cluster-signing-key-file=" + k("ca.key"),
		"--controllers=*",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	}
}

func schedulerArgs(c *Cluster) []string {
	kc := c.path("scheduler.kubeconfig")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.state.Ports.Scheduler),
		"--cert-dir=" + c.path("scheduler"),
		"--leader-elect=false",
		"--profiling=false",
	}
}

func kwokArgs(c *Cluster) []string {
	return []string{
		"--kubeconfig=" + c.path("kwok.kubeconfig"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--manage-nodes-with-label-selector=",
		"--manage-single-node=",
		"--node-lease-duration-seconds=40",
		"--cidr=" + podCIDR,
		"--node-ip=" + nodeIP,
		fmt.Sprintf("--server-address=127.0.0.1:%d", c.state.Ports.Kwok),
		"--config=" + c.cfg.KwokStages,
		"--config=" + c.path(extraStagesFile),
	}
}
