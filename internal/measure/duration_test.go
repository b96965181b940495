package measure

import (
	"encoding/json"
	"math"
	"testing"
	"time"
	"unsafe"
)

func TestAbsentStaysUnknown(t *testing.T) {
	t0 := time.Now()
	for _, d := range []Duration{{}, Between(time.Time{}, t0), Between(t0, time.Time{}), Duration{}.Plus(time.Second)} {
		if d.Known() {
			t.Fatalf("%+v known", d)
		}
		if got := d.Or(-time.Second); got != -time.Second {
			t.Fatalf("Or of an unmeasured duration: %v, want the fallback", got)
		}
		if v, ok := d.MS(); ok || v != 0 {
			t.Fatalf("MS of an unmeasured duration: %v %v", v, ok)
		}
		if js := d.JS(); js != nil {
			t.Fatalf("JS of an unmeasured duration: %v, want nil (null)", js)
		}
		b, err := json.Marshal(d)
		if err != nil || string(b) != "null" {
			t.Fatalf("JSON of an unmeasured duration: %s %v", b, err)
		}
	}
}

// A measured zero is a figure, not an absence.
func TestMeasuredZeroIsKnown(t *testing.T) {
	t0 := time.Now()
	d := Between(t0, t0)
	if v, ok := d.MS(); !ok || v != 0 {
		t.Fatalf("measured 0: %v %v", v, ok)
	}
	if js, ok := d.JS().(float64); !ok || js != 0 {
		t.Fatalf("JS of a measured 0: %v", d.JS())
	}
}

func TestMillisecondsAndJSONRoundTrip(t *testing.T) {
	d := Of(1500 * time.Microsecond)
	if v, ok := d.MS(); !ok || v != 1.5 {
		t.Fatalf("MS = %v %v, want 1.5", v, ok)
	}
	b, err := json.Marshal(struct {
		A Duration `json:"a"`
		B Duration `json:"b"`
	}{A: d})
	if err != nil || string(b) != `{"a":1.5,"b":null}` {
		t.Fatalf("JSON %s %v", b, err)
	}
	var back struct{ A, B Duration }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, ok := back.A.Get(); !ok || got != 1500*time.Microsecond || back.B.Known() {
		t.Fatalf("round trip: %+v", back)
	}
	if err := json.Unmarshal([]byte(`"x"`), &back.A); err == nil {
		t.Fatal("a string read as a duration")
	}
}

func TestBetweenAndPlusKeepTheFigure(t *testing.T) {
	t0 := time.Now()
	d := Between(t0, t0.Add(3*time.Millisecond))
	if got, ok := d.Get(); !ok || got != 3*time.Millisecond {
		t.Fatalf("Between = %v %v, want 3ms", got, ok)
	}
	if got := d.Plus(2 * time.Millisecond).Or(0); got != 5*time.Millisecond {
		t.Fatalf("Plus = %v, want 5ms", got)
	}
	if d.String() != "3ms" || (Duration{}).String() != "none" {
		t.Fatalf("String = %q, %q", d, Duration{})
	}
	if got := d.Or(time.Hour); got != 3*time.Millisecond {
		t.Fatalf("Or of a measured duration = %v, want it, not the fallback", got)
	}
}

// Any duration a call can measure round-trips, a negative one (a clock
// step) and the extremes included; the zero Duration alone is none.
func TestEveryMeasurableDurationIsKnown(t *testing.T) {
	for _, d := range []time.Duration{0, 1, -1, -time.Hour, time.Hour, math.MaxInt64, math.MinInt64 + 1} {
		if got, ok := Of(d).Get(); !ok || got != d {
			t.Fatalf("Of(%d).Get() = %d %v", d, got, ok)
		}
	}
	if unsafe.Sizeof(Duration{}) != unsafe.Sizeof(time.Duration(0)) {
		t.Fatalf("a Duration is %d bytes, a time.Duration %d", unsafe.Sizeof(Duration{}), unsafe.Sizeof(time.Duration(0)))
	}
}
