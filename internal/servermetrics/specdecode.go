package servermetrics

import (
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// vLLM's accepted tokens by draft position (labelled position, from 0).
const specPerPosFamily = "vllm:spec_decode_num_accepted_tokens_per_pos"

// specPosPrefix keys a position's accepted tokens among the counters.
const specPosPrefix = SpecAcceptedTokens + "/"

// SpecDecode is speculative decoding over a window: what the draft model
// proposed and the target model accepted. It explains a TPOT that moved:
// each accepted token is one the engine did not need a step for.
type SpecDecode struct {
	Drafts         float64 `json:"drafts"`
	DraftTokens    float64 `json:"draft_tokens"`
	AcceptedTokens float64 `json:"accepted_tokens"`
	// AcceptanceRate = accepted ÷ draft tokens; MeanAcceptanceLength = 1 +
	// accepted ÷ drafts (the tokens one target step yields). Null when
	// nothing was drafted.
	AcceptanceRate       *float64 `json:"acceptance_rate"`
	MeanAcceptanceLength *float64 `json:"mean_acceptance_length"`
	// ByPosition is the share of drafts whose token at that position (from
	// 0) was accepted.
	ByPosition []float64 `json:"acceptance_by_position,omitempty"`
}

// specPositions adds vLLM's per-position accepted tokens to the counters,
// keyed specPosPrefix+position.
func specPositions(fams map[string]*dto.MetricFamily, keep func(*dto.Metric) bool, s *snapshot) {
	f, _ := counterFamily(fams, family{name: specPerPosFamily})
	if f == nil {
		return
	}
	for _, m := range f.GetMetric() {
		pos := labelOf(m, []string{"position"})
		if pos == "" || !keep(m) {
			continue
		}
		k := specPosPrefix + pos
		if v := scalar(m); s.bad.note(f.GetName(), "", m, v) {
			s.markUnknown(k)
		} else {
			s.counters[k] += v
		}
	}
}

// specDecode takes the speculative-decoding counters out of a window's
// counters (the per-position ones) and sums them up; nil when the server
// has none.
func specDecode(w *Window) *SpecDecode {
	drafts, okD := w.Counters[SpecDrafts]
	draftTokens, okT := w.Counters[SpecDraftTokens]
	accepted, okA := w.Counters[SpecAcceptedTokens]
	byPos := map[int]float64{}
	for k, v := range w.Counters {
		if p, ok := strings.CutPrefix(k, specPosPrefix); ok {
			delete(w.Counters, k)
			if i, err := strconv.Atoi(p); err == nil && i >= 0 && i < 64 {
				byPos[i] = v
			}
		}
	}
	if !okD && !okT && !okA {
		return nil
	}
	sd := &SpecDecode{Drafts: drafts, DraftTokens: draftTokens, AcceptedTokens: accepted}
	if okT && okA && draftTokens > 0 {
		sd.AcceptanceRate = ptr(accepted / draftTokens)
	}
	if okD && okA && drafts > 0 {
		sd.MeanAcceptanceLength = ptr(1 + accepted/drafts)
		positions := make([]int, 0, len(byPos))
		for i := range byPos {
			positions = append(positions, i)
		}
		sort.Ints(positions)
		for _, i := range positions {
			for len(sd.ByPosition) < i {
				sd.ByPosition = append(sd.ByPosition, 0)
			}
			sd.ByPosition = append(sd.ByPosition, byPos[i]/drafts)
		}
	}
	return sd
}
