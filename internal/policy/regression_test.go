package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSlowerThanBaselineNeedsMoreThanNoise: a call regresses only past the
// baseline's P95 plus a tenth of it, at least 10 ms.
func TestSlowerThanBaselineNeedsMoreThanNoise(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		ttft, p95 time.Duration
		slower    bool
	}{
		{62 * ms, 54 * ms, false}, // a fast model's few ms of noise: under the 10 ms floor
		{64 * ms, 54 * ms, false}, // exactly the floor is not past it
		{65 * ms, 54 * ms, true},
		{540 * ms, 500 * ms, false}, // 8 % over a 500 ms P95: within the tenth
		{551 * ms, 500 * ms, true},
		{3 * time.Second, 2 * time.Second, true},
		{time.Second, 2 * time.Second, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.slower, SlowerThanBaseline(c.ttft, c.p95), "ttft %v against a P95 of %v", c.ttft, c.p95)
	}
}
