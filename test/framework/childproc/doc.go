// Package childproc runs a program as a child process the way a supervisor
// would: in a process group of its own (so a signal reaches everything it
// starts), killed if the parent dies, its output in a log file; Probe
// asks its health endpoints. The benchmark, the chaos harness and the
// end-to-end tests run and probe operators with it.
package childproc
