package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func clientRecords(r *Run) map[string]*runrecord.ClientRecord {
	if !r.PerClient() {
		return nil
	}
	out := map[string]*runrecord.ClientRecord{}
	for _, name := range r.Clients() {
		v := r.Client(name)
		cr := &runrecord.ClientRecord{Categories: map[string]*runrecord.CategoryRecord{}, Stages: stageRecords(v),
			StageNote: v.StageNote(), Waves: waveRecords(v)}
		for _, cat := range append(v.Categories(), runrecord.AllCategories) {
			cr.Categories[cat] = categoryRecordOf(v, cat)
		}
		out[runrecord.ClientLabel(name)] = cr
	}
	return out
}

func stageRecords(r *Run) []runrecord.StageRecord {
	var out []runrecord.StageRecord
	for _, st := range r.Stages() {
		out = append(out, runrecord.StageRecord{
			Concurrency: st.Concurrency, ByRate: st.ByRate, Calls: st.Calls, SteadySeconds: st.Steady.Seconds(),
			TTFTP50: runrecord.FiniteOr0(q50(st.All.S(runrecord.MetricTTFT))), TTFTP95: runrecord.FiniteOr0(st.All.S(runrecord.MetricTTFT).Quantile(0.95)),
			TokensPerSecP50: runrecord.FiniteOr0(q50(st.All.S(runrecord.MetricTokensPerSec))),
			RequestsPerSec:  runrecord.FiniteOr0(st.RequestsPerSec), OutputTokensPerSec: runrecord.FiniteOr0(st.OutputTokensPerSec),
		})
	}
	return out
}
