package sim

import (
	"testing"
	"time"
)

// A stamp is the epoch's Unix time plus the monotonic time since it: two
// stamps are apart by exactly the monotonic duration between their times,
// which is what the histograms measure. A time without a monotonic reading
// (FakeClock's) is its own Unix time.
func TestStampsAreTheEpochPlusMonotonicTime(t *testing.T) {
	a := time.Now()
	time.Sleep(2 * time.Millisecond)
	b := time.Now()
	if got, want := unixNano(b)-unixNano(a), int64(b.Sub(a)); got != want {
		t.Fatalf("stamps %d ns apart, the monotonic clock %d", got, want)
	}
	if got, want := unixNano(traceEpoch.Add(time.Hour)), traceEpoch.UnixNano()+int64(time.Hour); got != want {
		t.Fatalf("epoch + 1h stamped %d, want %d", got, want)
	}
	fake := time.Unix(1_700_000_000, 123)
	if got := unixNano(fake); got != fake.UnixNano() {
		t.Fatalf("a time without a monotonic reading stamped %d, want its UnixNano %d", got, fake.UnixNano())
	}
	if unixNano(time.Time{}) != 0 {
		t.Fatal("the zero time has a stamp")
	}
}
