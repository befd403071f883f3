// Package childproc runs a program as a child process the way a supervisor
// would: in a process group of its own (so a signal reaches everything it
// starts), killed if the parent dies, its output in a log file. The
// benchmark and the chaos harness run operators with it.
package childproc
