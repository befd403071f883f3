// Command devcluster runs chartkeeper's local Kubernetes control plane:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as
// plain processes on 127.0.0.1, with state in one directory.
//
//	devcluster up      [--dir .cluster] [--bin bin] [--nodes 3] [--pods-per-node 1000] [--apiserver-port 0] ...
//	devcluster down    [--dir .cluster] [--purge]
//	devcluster status  [--dir .cluster]
//	devcluster etcd-pods [--dir .cluster] [--bin bin]
//	devcluster s3      [--dir .cluster] [--addr 127.0.0.1:9000] [--bucket etcd-backups]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/etcdpods"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: devcluster <up|down|status> [flags]

  up       start the local cluster (or reuse the running one) and print how to use it
  down     stop exactly the processes "up" started; --purge also deletes the state directory
  status   show each component's process and health
  etcd-pods  run a real etcd process on 127.0.0.1 for each EtcdCluster Pod
           (kwok starts no containers); until Ctrl-C, which stops them
  s3       serve an S3 API on 127.0.0.1 for local backups (data in <dir>/s3.db);
           a development stand-in for a real bucket, until Ctrl-C

Run "devcluster <command> -h" for the flags of a command.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("devcluster "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".cluster", "state directory (PKI, data, logs, kubeconfigs)")
	var cfg devcluster.Config
	var purge bool
	var s3Addr, s3Bucket string
	switch args[0] {
	case "up":
		fs.StringVar(&cfg.BinDir, "bin", "bin", "directory holding the control-plane binaries (make tools)")
		fs.IntVar(&cfg.Nodes, "nodes", 3, "number of kwok fake nodes")
		fs.IntVar(&cfg.PodsPerNode, "pods-per-node", 1000, "pod capacity of each fake node")
		fs.DurationVar(&cfg.StartTimeout, "timeout", 2*time.Minute, "how long to wait for each component")
		fs.IntVar(&cfg.Ports.APIServer, "apiserver-port", 0, "kube-apiserver port (0: a free port)")
		fs.IntVar(&cfg.Ports.Etcd, "etcd-port", 0, "etcd client port (0: a free port)")
		fs.IntVar(&cfg.Ports.EtcdPeer, "etcd-peer-port", 0, "etcd peer port (0: a free port)")
		fs.IntVar(&cfg.Ports.EtcdMetrics, "etcd-metrics-port", 0, "etcd metrics port (0: a free port)")
		fs.IntVar(&cfg.Ports.ControllerManager, "controller-manager-port", 0, "kube-controller-manager port (0: a free port)")
		fs.IntVar(&cfg.Ports.Scheduler, "scheduler-port", 0, "kube-scheduler port (0: a free port)")
		fs.IntVar(&cfg.Ports.Kwok, "kwok-port", 0, "kwok server port (0: a free port)")
	case "down":
		fs.BoolVar(&purge, "purge", false, "also delete the state directory")
	case "status":
	case "etcd-pods":
		fs.StringVar(&cfg.BinDir, "bin", "bin", "directory holding etcd and chartkeeper")
	case "s3":
		fs.StringVar(&s3Addr, "addr", "127.0.0.1:9000", "address to serve on (loopback only)")
		fs.StringVar(&s3Bucket, "bucket", "etcd-backups", "bucket to create")
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "devcluster: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch args[0] {
	case "up":
		cfg.Dir, cfg.Log = *dir, stdout
		begin := time.Now()
		fmt.Fprintf(stdout, "Starting the local cluster in %s ...\n", *dir)
		c, err := devcluster.Up(ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "devcluster up: %v\n", err)
			return 1
		}
		printUsage(stdout, c, time.Since(begin))
	case "down":
		var err error
		if purge {
			err = devcluster.Purge(*dir, stdout)
		} else {
			err = devcluster.Down(*dir, stdout)
		}
		if err != nil {
			fmt.Fprintf(stderr, "devcluster down: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Local cluster in %s stopped.\n", *dir)
	case "etcd-pods":
		return runEtcdPods(ctx, *dir, cfg.BinDir, stdout, stderr)
	case "s3":
		return runS3(ctx, *dir, s3Addr, s3Bucket, stdout, stderr)
	case "status":
		sts, exists, err := devcluster.Status(ctx, *dir)
		if err != nil {
			fmt.Fprintf(stderr, "devcluster status: %v\n", err)
			return 1
		}
		if !exists {
			fmt.Fprintf(stdout, "No local cluster in %s (start one with: make cluster-up)\n", *dir)
			return 3
		}
		devcluster.PrintStatus(stdout, sts)
		for _, s := range sts {
			if !s.Healthy {
				return 3
			}
		}
	}
	return 0
}

// runEtcdPods runs the etcdpods.Runner on the local cluster in dir.
func runEtcdPods(ctx context.Context, dir, bin string, stdout, stderr io.Writer) int {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		fmt.Fprintf(stderr, "devcluster etcd-pods: no local cluster in %s: %v\n", dir, err)
		return 1
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "devcluster etcd-pods: %v\n", err)
		return 1
	}
	r := &etcdpods.Runner{Client: cs, EtcdBin: filepath.Join(bin, "etcd"), ChartkeeperBin: filepath.Join(bin, "chartkeeper"),
		Dir: filepath.Join(dir, "etcd-pods"), Log: stdout}
	fmt.Fprintf(stdout, "etcd-pods: running EtcdCluster members of %s on 127.0.0.1 (data and logs in %s); Ctrl-C stops them\n", dir, r.Dir)
	if err := r.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "devcluster etcd-pods: %v\n", err)
		return 1
	}
	return 0
}

func printUsage(w io.Writer, c *devcluster.Cluster, took time.Duration) {
	kc := c.Kubeconfig()
	bin, _ := filepath.Abs("bin")
	fmt.Fprintf(w, `
Local cluster ready in %.1fs: API server https://127.0.0.1:%d, %d kwok nodes.
Use it:
  export KUBECONFIG=%s
  %s/kubectl get nodes
  %s/helm list -A
Stop it with "make cluster-down" (state and data are kept for the next "make cluster-up").
`, took.Seconds(), c.State().Ports.APIServer, c.State().Nodes, kc, bin, bin)
}
