package energy

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1_700_000_000, 0)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// Two GPUs with counters: a run's energy is the counters' deltas summed, and
// its spans add up to it.
func TestCounterDeltasAddUp(t *testing.T) {
	m := NewMeter()
	for i := 0; i <= 10; i++ {
		s := float64(i)
		m.Scrape(at(s), []Reading{
			{GPU: "GPU-a", PowerW: 300, EnergyMJ: 5e9 + 300_000*s},
			{GPU: "GPU-b", PowerW: 100, EnergyMJ: 7e9 + 100_000*s},
		})
	}
	run := m.Energy(at(0), at(10))
	require.InDelta(t, 4000, run.Joules, 1e-6) // (300 + 100) W × 10 s
	require.InDelta(t, 400, run.AvgPowerW, 1e-9)
	require.Equal(t, 2, run.GPUs)
	require.Equal(t, []string{SourceCounter}, run.Sources)
	require.Empty(t, run.Partial)
	a, b := m.Energy(at(0), at(3.5)), m.Energy(at(3.5), at(10))
	require.InDelta(t, run.Joules, a.Joules+b.Joules, 1e-6, "spans add up to the run")
	require.InDelta(t, 1400, a.Joules, 1e-6)
}

// Without a counter the power gauge is integrated by trapezoids: a ramp from
// 100 W to 300 W over 10 s is 2 kJ exactly.
func TestPowerIntegrated(t *testing.T) {
	m := NewMeter()
	for i := 0; i <= 10; i++ {
		m.Scrape(at(float64(i)), []Reading{{GPU: "0", PowerW: 100 + 20*float64(i), EnergyMJ: math.NaN()}})
	}
	run := m.Energy(at(0), at(10))
	require.InDelta(t, 2000, run.Joules, 1e-9)
	require.Equal(t, []string{SourcePower}, run.Sources)
}

// A counter that restarts counts on from zero; a GPU that vanishes is named,
// and a span it covers only partly says so.
func TestResetAndLostGPU(t *testing.T) {
	m := NewMeter()
	m.Scrape(at(0), []Reading{{GPU: "a", EnergyMJ: 9e6, PowerW: math.NaN()}, {GPU: "b", EnergyMJ: 1e6, PowerW: math.NaN()}})
	m.Scrape(at(1), []Reading{{GPU: "a", EnergyMJ: 9.2e6, PowerW: math.NaN()}, {GPU: "b", EnergyMJ: 1.1e6, PowerW: math.NaN()}})
	m.Scrape(at(2), []Reading{{GPU: "a", EnergyMJ: 150e3, PowerW: math.NaN()}}) // a restarted, b is gone
	m.Scrape(at(3), []Reading{{GPU: "a", EnergyMJ: 350e3, PowerW: math.NaN()}})
	run := m.Energy(at(0), at(3))
	require.InDelta(t, 200+150+200+100, run.Joules, 1e-6)
	require.Equal(t, 1, run.Resets)
	require.Equal(t, []string{"b"}, run.Partial)
	require.Equal(t, []string{"b"}, m.Lost())
	require.Zero(t, m.Energy(at(2.5), at(3)).Resets)
}

func TestNothingKnownIsNaN(t *testing.T) {
	m := NewMeter()
	require.True(t, math.IsNaN(m.Energy(at(0), at(1)).Joules))
	m.Scrape(at(0), []Reading{{GPU: "a", PowerW: math.NaN(), EnergyMJ: math.NaN()}})
	m.Scrape(at(1), []Reading{{GPU: "a", PowerW: math.NaN(), EnergyMJ: math.NaN()}})
	require.True(t, math.IsNaN(m.Energy(at(0), at(1)).Joules), "a GPU with neither figure is unknown, never 0 J")
	require.True(t, math.IsNaN(m.Energy(at(1), at(1)).Joules))
}
