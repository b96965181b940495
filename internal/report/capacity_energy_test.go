package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// A capacity window's span is its measured part: from its warm-up's end
// (its start, when it stopped within the warm-up) to its end.
func TestCapacitySpans(t *testing.T) {
	c := &runrecord.Capacity{WarmupS: 5, Windows: []runrecord.CapacityWindow{
		{Index: 0, StartS: 0, EndS: 20}, {Index: 1, StartS: 20, EndS: 23},
	}}
	spans := CapacitySpans(c, t0)
	require.Len(t, spans, 2)
	assert.Equal(t, servermetrics.Span{Name: "capacity window 0", From: t0.Add(5 * time.Second), To: t0.Add(20 * time.Second)}, spans[0])
	assert.Equal(t, servermetrics.Span{Name: "capacity window 1", From: t0.Add(20 * time.Second), To: t0.Add(23 * time.Second)}, spans[1],
		"stopped within its warm-up: the whole window")
	assert.Nil(t, CapacitySpans(nil, t0))
}

// exporter is a GPU exporter's view with one energy window per capacity
// window (joules, watts, the client's tokens and requests over it).
func exporter(client string, windows ...servermetrics.EnergyStats) servermetrics.View {
	v := servermetrics.View{Client: client, Engine: servermetrics.EngineDCGM}
	for i := range windows {
		v.CapacityWindows = append(v.CapacityWindows, servermetrics.Window{Name: capacityWindowName(i + 1), Energy: &windows[i]})
	}
	return v
}

// Two exporters of one client (two GPU nodes behind its engines): their
// energy and power add up, the engines' tokens count once; a window whose
// energy one of them does not know is unknown; a window none covers has no
// energy at all.
func TestCapacityEnergyAcrossExporters(t *testing.T) {
	c := searched(6.2)
	tok, req := 1000.0, 10.0
	a := exporter("c",
		servermetrics.EnergyStats{Joules: ptr(300.0), AvgPowerW: ptr(20.0), OutputTokens: &tok, Requests: &req},
		servermetrics.EnergyStats{Joules: ptr(100.0), AvgPowerW: ptr(10.0), OutputTokens: &tok, Requests: &req})
	b := exporter("c",
		servermetrics.EnergyStats{Joules: ptr(100.0), AvgPowerW: ptr(5.0), OutputTokens: &tok, Requests: &req},
		servermetrics.EnergyStats{AvgPowerW: ptr(5.0), OutputTokens: &tok, Requests: &req})
	addCapacityEnergy(c, []servermetrics.View{a, b})
	e := c.Windows[0].Energy
	require.NotNil(t, e)
	assert.InDelta(t, 400, *e.Joules, 0)
	assert.InDelta(t, 25, *e.AvgPowerW, 0)
	assert.InDelta(t, 0.4, *e.JPerOutputToken, 1e-12, "the client's tokens once, not once per exporter")
	assert.InDelta(t, 40, *e.JPerRequest, 1e-12)
	e = c.Windows[1].Energy
	require.NotNil(t, e)
	assert.Nil(t, e.Joules, "one exporter's energy unknown: the sum is unknown")
	assert.Nil(t, e.JPerOutputToken)
	assert.InDelta(t, 15, *e.AvgPowerW, 0)
	assert.Nil(t, c.Windows[2].Energy, "no exporter covered it")
}

// The rows of the text, the HTML and the record carry the window's power
// and energy per output token and per request; without an exporter the
// table has no such columns.
func TestCapacityEnergyInTheReports(t *testing.T) {
	tok, req := 2000.0, 20.0
	dcgm := exporter("c", servermetrics.EnergyStats{Joules: ptr(600.0), AvgPowerW: ptr(412.0), OutputTokens: &tok, Requests: &req})
	run := runOf(call(t0, "", 100))
	run.SetCapacity(searched(6.2))
	text, page, raw, err := Render(run, nil, RenderOptions{Server: []servermetrics.View{dcgm}})
	require.NoError(t, err)
	require.Regexp(t, `(?m)^  # +phase .*out tok/s +GPU W +J/out tok +J/req +stopped +why`, text)
	require.Regexp(t, `(?m)^  1 +bracket +1\.00 +pass .* 412 +0\.3 +30 +closest`, text)
	require.Regexp(t, `(?m)^  2 +bracket +2\.00 +pass .* 100\.0 {20,}closest`, text, "a window no exporter covered: empty cells")
	require.Contains(t, string(page), "<th>J/out tok</th>")
	var rec struct {
		Capacity struct {
			Windows []struct {
				Energy *struct {
					Joules          *float64 `json:"joules"`
					AvgPowerW       *float64 `json:"avg_power_w"`
					JPerOutputToken *float64 `json:"j_per_output_token"`
					JPerRequest     *float64 `json:"j_per_request"`
				} `json:"energy"`
			} `json:"windows"`
		} `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	e := rec.Capacity.Windows[0].Energy
	require.NotNil(t, e)
	assert.InDelta(t, 600, *e.Joules, 0)
	assert.InDelta(t, 412, *e.AvgPowerW, 0)
	assert.InDelta(t, 0.3, *e.JPerOutputToken, 1e-12)
	assert.InDelta(t, 30, *e.JPerRequest, 1e-12)
	assert.Nil(t, rec.Capacity.Windows[1].Energy)

	run = runOf(call(t0, "", 100))
	run.SetCapacity(searched(6.2))
	text, _, _, err = Render(run, nil, RenderOptions{})
	require.NoError(t, err)
	assert.False(t, strings.Contains(text, "J/out tok"), "no exporter: no energy columns")
}
