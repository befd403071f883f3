// Package freeport hands out free TCP ports on 127.0.0.1, never the same
// port twice in one process: a port is free when returned, but after its
// probe listener closes the kernel may offer it again, and two callers that
// each bind "their" port soon after would clash.
package freeport
