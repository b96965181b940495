package calls

import (
	"testing"
	"unsafe"
)

// A call's plan, with its primary route's parts and its outcome, is one
// allocation of the allocator's 1024-byte size class: grown past it, the
// outcome made with it would cost more than one made apart.
func TestCallPlanFitsItsSizeClass(t *testing.T) {
	t.Parallel()
	if size := unsafe.Sizeof(callPlan{}); size > 1024 {
		t.Fatalf("a call plan is %d bytes, over the 1024-byte size class", size)
	}
}
