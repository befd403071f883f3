// Package bench measures how fast an operator turns custom resources into
// Helm releases on a real control plane, next to the floor of that control
// plane and next to any peer operator, in the same run (make bench).
//
// A run brings nothing up itself: it is given a cluster (Config.Kubeconfig)
// and runs its subjects one after another on it, each in namespaces of its
// own. A subject is either an operator started as a separate process
// (chartkeeper, or any Helm-SDK operator given as a command line) or the
// floor: a plain Go client writing the same objects an operator writes.
//
// A run measures one scenario (scenario.go): the chart every custom
// resource releases (test/bench/chart by default, test/bench/podinfo for
// the podinfo scenario shaped like Flux's published benchmark) and the
// specs it installs and upgrades with. With Config.Repeat the whole
// measurement runs several times and the table shows medians and spread.
//
// Every subject is measured the same way, from outside: an observer watches
// Helm's release Secrets (labels owner, name, status, version), every kind
// of object the scenario's chart releases and the custom resources, and
// times each release reaching each state. API requests are counted by the API
// server itself: each subject runs as its own ServiceAccount, which a
// FlowSchema of its own classifies, and the run reads
// apiserver_flowcontrol_dispatched_requests_total for that FlowSchema. CPU
// time and peak resident memory are read from /proc for operator processes.
// When the control plane's processes are known (Config.ControlPlane: the
// harness started the cluster), the CPU time they use during each phase is
// read from /proc too, whatever the subject (the floor included): what
// serving it cost the cluster, along with the harness's own requests and
// watches, which are the same for every subject. The table shows it, and
// both CPU times as shares of the machine's cores over the phases' wall
// time.
package bench
