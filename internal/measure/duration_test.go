package measure

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAbsentStaysUnknown(t *testing.T) {
	for _, d := range []Duration{{}, Signed(-1), Signed(-time.Second)} {
		if d.Known() {
			t.Fatalf("%+v known", d)
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
	d := Signed(0)
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
