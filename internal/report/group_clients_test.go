package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// abRun is an A/B (or shadow) test: every iteration sends one dataset item to
// both clients; "large" answers with ttftLarge ms, "small" with ttftSmall ms.
// The prompt's own length moves both (a per-item factor), so only pairing
// separates the services cleanly.
func abRun(seed uint64, stages []synthStage, ttftLarge, ttftSmall func(vus int) float64) []*Observation {
	rng := rand.New(rand.NewPCG(seed, 11))
	var out []*Observation
	at := t0
	item := 0
	for _, st := range stages {
		end := at.Add(time.Duration(st.Seconds) * time.Second)
		for v := range st.VUs {
			t := at.Add(time.Duration(v) * 37 * time.Millisecond)
			for t.Before(end) {
				item++
				id := fmt.Sprintf("item-%d", item%500)
				size := math.Exp(rng.NormFloat64() * 0.5) // the prompt's own weight
				for _, cl := range []struct {
					name string
					ttft func(int) float64
					tps  float64
				}{{"large", ttftLarge, 40}, {"small", ttftSmall, 80}} {
					ttft := msD(cl.ttft(st.VUs) * size * math.Exp(rng.NormFloat64()*0.15))
					tps := cl.tps * math.Exp(rng.NormFloat64()*0.1)
					e2e := ttft + time.Duration(30/tps*float64(time.Second))
					out = append(out, &Observation{
						Result: &stream.Result{Start: t, End: t.Add(e2e), OK: true, TTFT: measure.Of(ttft), E2E: measure.Of(e2e), TokensPerSec: tps, OutputTokens: 30,
							TPOT: measure.Of(time.Duration(float64(time.Second) / tps))},
						Origin: record.Origin{Name: cl.name, Model: cl.name + "-model", ItemID: id, Category: "chat"},
						VUs:    st.VUs,
						Active: st.VUs,
					})
					t = t.Add(e2e)
				}
				t = t.Add(10 * time.Millisecond)
			}
		}
		at = end
	}
	sort.Slice(out, func(i, j int) bool { return out[i].End.Before(out[j].End) })
	return out
}

func flat(ms float64) func(int) float64 { return func(int) float64 { return ms } }

func TestTwoClientsAreReportedApart(t *testing.T) {
	// large queues beyond 4 VUs, small never does.
	obs := abRun(1, plateaus(10, 2, 8, 16), func(v int) float64 { return 300 + 150*math.Max(0, float64(v-4)) }, flat(100))
	run := collectAll(obs)
	if !run.PerClient() || !slices.Equal(run.Clients(), []string{"large", "small"}) {
		t.Fatalf("clients %v", run.Clients())
	}
	// Each client's view holds exactly its own calls, the first client's
	// included (its calls came before the second client was seen).
	for _, name := range run.Clients() {
		c := NewCollector(Options{Start: t0})
		for _, o := range obs {
			if o.Name == name {
				c.Add(o)
			}
		}
		alone, view := c.Snapshot(), run.Client(name)
		if a, v := alone.Category(runrecord.AllCategories).Requests, view.Category(runrecord.AllCategories).Requests; a != v || a == 0 {
			t.Errorf("%s: %d calls alone, %d in its view", name, a, v)
		}
		if a, v := len(alone.Stages()), len(view.Stages()); a != v {
			t.Errorf("%s: %d stages alone, %d in its view", name, a, v)
		}
		if a, v := len(alone.Samples(runrecord.AllCategories)), len(view.Samples(runrecord.AllCategories)); a != v {
			t.Errorf("%s: %d samples alone, %d in its view", name, a, v)
		}
	}
	fs := Diagnose(run)
	var large, small []string
	for _, f := range fs {
		switch f.Client {
		case "large":
			large = append(large, f.ID)
		case "small":
			small = append(small, f.ID)
		default:
			t.Errorf("finding without its client: %s", f.ID)
		}
	}
	if !slices.Contains(large, "queue_bound") || slices.Contains(small, "queue_bound") {
		t.Errorf("queue_bound must be large's alone: large %v, small %v", large, small)
	}
	text, doc, rec, err := Render(run, nil, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"large · chat", "small · all", "every client · all", "client · route · model",
		"large · large-model", "stage (VUs)", "out tok/s  client large", "[queue_bound] large:"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, id := range []string{`id="ttft-clients"`, `id="ttft-hist-large"`, `id="ts-ttft-small"`, `id="stage-ttft-large"`, `id="routes"`, `id="paired-0"`} {
		if !strings.Contains(string(doc), id) {
			t.Errorf("HTML lacks %s", id)
		}
	}
	if strings.Contains(string(doc), "NaN") || strings.Contains(text, "NaN") {
		t.Error("a rendering shows NaN")
	}
	var back struct {
		Clients map[string]*runrecord.ClientRecord `json:"clients"`
		Routes  []runrecord.RouteRecord            `json:"routes"`
		Paired  []runrecord.PairedComparison       `json:"paired"`
		Stages  []runrecord.StageRecord            `json:"stages"`
	}
	if err := json.Unmarshal(rec, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Clients) != 2 || len(back.Clients["large"].Stages) < 2 || len(back.Routes) != 2 || len(back.Paired) != 1 || back.Stages != nil {
		t.Fatalf("record: %d clients, %d routes, %d paired, run-wide stages %v", len(back.Clients), len(back.Routes), len(back.Paired), back.Stages)
	}
	if _, err := runrecord.LoadBaseline(rec); err != nil {
		t.Fatal(err)
	}
}

func TestPairedComparisonNamesTheFasterClient(t *testing.T) {
	run := collectAll(abRun(2, []synthStage{{4, 30}}, flat(300), flat(120)))
	ps := run.Paired()
	if len(ps) != 1 || ps[0].A != "large" || ps[0].B != "small" || ps[0].Pairs < 50 {
		t.Fatalf("%+v", ps)
	}
	byMetric := map[string]runrecord.PairedRow{}
	for _, row := range ps[0].Rows {
		byMetric[row.Metric] = row
	}
	ttft := byMetric["ttft"]
	if ttft.Verdict != "small is better" || ttft.CIHigh >= 0 || ttft.MedianDiff > -130 || ttft.MedianDiff < -230 {
		t.Errorf("ttft: %+v", ttft)
	}
	if tps := byMetric["tokens_per_sec"]; tps.Verdict != "small is better" || tps.CILow <= 0 {
		t.Errorf("tokens/s: %+v", tps)
	}
	if e2e := byMetric["e2e"]; e2e.Verdict != "small is better" {
		t.Errorf("e2e: %+v", e2e)
	}
}

// Two equal services: the paired verdict must say so nearly always (a 95 %
// interval errs in about 1 in 20 runs, and the 5 % effect floor cuts that).
func TestPairedComparisonOfEqualClientsFindsNoDifference(t *testing.T) {
	wrong := 0
	for seed := uint64(1); seed <= 20; seed++ {
		run := collectAll(abRun(seed, []synthStage{{2, 20}}, flat(200), flat(200)))
		for _, row := range run.Paired()[0].Rows {
			if row.Metric == "ttft" && row.Verdict != "no significant difference" {
				wrong++
			}
		}
	}
	if wrong > 1 {
		t.Errorf("%d of 20 runs of equal services got a TTFT verdict", wrong)
	}
}

func TestPairsAreBounded(t *testing.T) {
	p := newPairer()
	for i := range 3 * pairPendingMax {
		p.add(&Observation{
			Result: &stream.Result{OK: true, TTFT: measure.Of(msD(1))},
			Origin: record.Origin{Name: "a", ItemID: fmt.Sprint(i)},
		})
	}
	if len(p.pending) > pairPendingMax || len(p.order) > 4*pairPendingMax+1 {
		t.Fatalf("%d pending, %d ids in order", len(p.pending), len(p.order))
	}
	for range 3 * pairKeep {
		p.add(&Observation{
			Result: &stream.Result{OK: true, TTFT: measure.Of(msD(1))},
			Origin: record.Origin{Name: "a", ItemID: "x"},
		})
		p.add(&Observation{
			Result: &stream.Result{OK: true, TTFT: measure.Of(msD(2))},
			Origin: record.Origin{Name: "b", ItemID: "x"},
		})
	}
	s := p.pairs[pairKey{"a", "b"}]
	if s.seen != 3*pairKeep || len(s.a) != pairKeep {
		t.Fatalf("seen %d, kept %d", s.seen, len(s.a))
	}
}
