// Package freeport hands out free TCP ports on 127.0.0.1, never the same
// port twice on one machine while the process that got it runs.
//
// A port free when probed can be taken before its caller binds it: by a
// later probe (in this process or another), or as the local port of an
// outgoing connection when it lies in the kernel's ephemeral range. So
// ports are drawn from below that range, remembered in this process, and
// locked across processes by a lock file each (flock'ed by the process
// that got the port until it exits; the kernel drops the lock then).
package freeport
