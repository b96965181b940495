package report

// ClientRecord is one client's part of the run record when the run had
// several: its categories (with the raw samples a later run compares
// against), stages and waves.
type ClientRecord struct {
	Categories map[string]*CategoryRecord `json:"categories"`
	Stages     []StageRecord              `json:"stages,omitempty"`
	StageNote  string                     `json:"stage_note,omitempty"`
	Waves      []WaveRecord               `json:"waves,omitempty"`
}

func clientRecords(r *Run) map[string]*ClientRecord {
	if !r.PerClient() {
		return nil
	}
	out := map[string]*ClientRecord{}
	for _, name := range r.Clients() {
		v := r.Client(name)
		cr := &ClientRecord{Categories: map[string]*CategoryRecord{}, Stages: stageRecords(v),
			StageNote: v.StageNote(), Waves: waveRecords(v)}
		for _, cat := range append(v.Categories(), AllCategories) {
			cr.Categories[cat] = categoryRecordOf(v, cat)
		}
		out[clientLabel(name)] = cr
	}
	return out
}

func stageRecords(r *Run) []StageRecord {
	var out []StageRecord
	for _, st := range r.Stages() {
		out = append(out, StageRecord{
			Concurrency: st.Concurrency, ByRate: st.ByRate, Calls: st.Calls, SteadySeconds: st.Steady.Seconds(),
			TTFTP50: finiteOr0(q50(st.All.S(MetricTTFT))), TTFTP95: finiteOr0(st.All.S(MetricTTFT).Quantile(0.95)),
			TokensPerSecP50: finiteOr0(q50(st.All.S(MetricTokensPerSec))),
			RequestsPerSec:  finiteOr0(st.RequestsPerSec), OutputTokensPerSec: finiteOr0(st.OutputTokensPerSec),
		})
	}
	return out
}
