package testenv

import (
	"testing"

	"github.com/chartkeeper/chartkeeper/test/framework/freeport"
)

// FreePorts returns n free TCP ports on 127.0.0.1 that no earlier call in
// this process returned (freeport.Ports), failing the test if there are none.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	p, err := freeport.Ports(n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FreeAddr is FreePorts for one port, as "127.0.0.1:port".
func FreeAddr(t testing.TB) string {
	t.Helper()
	a, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
