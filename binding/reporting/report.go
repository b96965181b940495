package reporting

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/load"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/k6summary"
	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The report's JS functions: report(data, options) in handleSummary renders
// what the report's intake (binding/runstate/collectors.go) gathered, with the schedules' and
// capacity searches' accounts; collect(options) and loadBaseline(path) set,
// in the init context, what the collectors leave out and compare against.

// reporter is one VU's side of the report: report(), collect() and
// loadBaseline().
type Reporter struct {
	VU      modules.VU
	State   *runstate.ReportState
	Scope   k6env.VUScope
	Module  string // the module's import path and version, for run records
	Version string
	Server  *runstate.ServerState // the serverMetrics endpoints, for the server's view
	// schedules are the process's Schedules, whose account the report gives.
	Schedules *load.ScheduleList
	// searches are the process's capacity searches, whose answer the report gives.
	Searches *load.SearchList
	// Gates are the process's precision gates, whose verdict the report gives.
	Gates *load.GateList
}

// loadBaseline is the JS `loadBaseline(path)`: in the init context it reads a
// run record through k6's file system (so `k6 archive` carries it) and makes it
// drive the live llm_regression Rate.
func (rp Reporter) LoadBaseline(path string) (map[string]any, error) {
	env := rp.VU.InitEnv()
	if env == nil {
		return nil, errors.New("loadBaseline() must be called in the init context (top level of the script)")
	}
	abs := fsext.Abs(env.CWD.Path, path)
	rp.State.Info.SkipFile(abs) // a baseline is no part of the test's fingerprint
	data, err := fsext.ReadFile(env.FileSystems["file"], abs)
	if err != nil {
		return nil, fmt.Errorf("loadBaseline(%q): %w", path, err)
	}
	rec, err := runrecord.ParseRecord(path, data)
	if err != nil {
		return nil, fmt.Errorf("loadBaseline: %w", err)
	}
	rp.State.SetBaseline(rec, path)
	cats := make([]string, 0, len(rec.Categories))
	for k := range rec.Categories {
		cats = append(cats, k)
	}
	sort.Strings(cats)
	return map[string]any{"path": path, "categories": cats}, nil
}

// report is the JS `report(data, options)` for handleSummary: k6's own text
// summary plus the LLM section on stdout, and the HTML and JSON files asked for.
func (rp Reporter) Report(data sobek.Value, opts sobek.Value) (map[string]any, error) {
	o := config.DefaultReport()
	if err := k6env.DecodeOptions(opts, "report options", &o); err != nil {
		return nil, err
	}
	rs := rp.State
	run := rs.Intake().Snapshot()
	run.SetDispatch(dispatchAccount(rp.VU.Runtime(), rp.Schedules, data))
	run.SetCapacity(rp.Searches.Account())
	run.SetPrecision(rp.Gates.Account(segmentOf(rp.Scope)))
	run.SetInterruption(rs.Stop.Interruption(func(metric, source string) bool {
		ok, known := summaryPath(rp.VU.Runtime(), data, "metrics", metric, "thresholds", source, "ok")
		return known && ok == 0 // false: the threshold failed
	}))
	if o.MinStage > 0 {
		run.SetMinStage(o.MinStage)
	}
	base, basePath := rs.Baseline()
	if o.Baseline != "" && o.Baseline != basePath {
		raw, err := os.ReadFile(o.Baseline) //nolint:gosec,forbidigo // handleSummary has no init file system
		if err != nil {
			return nil, fmt.Errorf("report: baseline: %w", err)
		}
		if base, err = runrecord.ParseRecord(o.Baseline, raw); err != nil {
			return nil, err
		}
	}
	info := rp.State.Info.RunInfo(rp.Scope, rp.Version)
	meta := rp.runMeta(o.Meta)
	ro := report.RenderOptions{Title: o.Title, Meta: meta, Info: info, Server: rp.serverViews(run), Baseline: base}
	if base != nil {
		ro.BaselineServer = base.Server
	}
	text, html, record, err := report.Render(run, nil, ro)
	if err != nil {
		return nil, err
	}
	k6Text, err := rp.k6TextSummary(data)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if o.Stdout {
		out["stdout"] = k6Text + "\n" + text + "\n"
	}
	if o.HTML != "" {
		out[o.HTML] = string(html)
	}
	if o.JSON != "" {
		out[o.JSON] = string(record)
	}
	return out, nil
}

// serverViews are the serverMetrics endpoints' views, with a window per load
// stage of the run (from its first call's start to its last one's) and per
// capacity window.
func (rp Reporter) serverViews(run *report.Run) []servermetrics.View {
	if rp.Server == nil {
		return nil
	}
	stages := run.Stages()
	spans := make([]servermetrics.Span, 0, len(stages))
	if len(stages) > 1 {
		for _, st := range stages {
			spans = append(spans, servermetrics.Span{Name: report.ServerStageName(st), From: st.First, To: st.Last})
		}
	}
	var capacity []servermetrics.Span
	if origin, ok := rp.Searches.Origin(); ok {
		capacity = report.CapacitySpans(run.Capacity, origin)
	}
	return rp.Server.Views(spans, capacity, run.Excluded.IncludedFrom)
}

// runMeta is the record's metadata: versions and what the script adds.
func (rp Reporter) runMeta(extra map[string]any) map[string]any {
	meta := map[string]any{"module": rp.Module, "moduleVersion": rp.Version, "k6Version": runstate.K6Version()}
	for k, v := range extra {
		meta[k] = v
	}
	return meta
}

// k6TextSummary renders k6's end-of-test text summary from handleSummary's data.
func (rp Reporter) k6TextSummary(data sobek.Value) (string, error) {
	if common.IsNullish(data) {
		return "", nil
	}
	rt := rp.VU.Runtime()
	fnV, err := rt.RunString("(function () { var module = { exports: {} }; (function (module, exports) {\n" +
		k6summary.Code + "\n})(module, module.exports); return module.exports.textSummary; })()")
	if err != nil {
		return "", fmt.Errorf("report: k6 summary: %w", err)
	}
	fn, ok := sobek.AssertFunction(fnV)
	if !ok {
		return "", errors.New("report: k6 summary: textSummary is not a function")
	}
	opts := rt.NewObject()
	_ = opts.Set("indent", " ")
	_ = opts.Set("enableColors", false)
	v, err := fn(sobek.Undefined(), data, opts)
	if err != nil {
		return "", fmt.Errorf("report: k6 summary: %w", err)
	}
	return v.String(), nil
}

// collectOptions is what collect(options) accepts: which calls the report
// leaves out, and how long a load stage must last.
type collectOptions struct {
	Warmup           time.Duration     `opt:"warmup"`
	ExcludeScenarios []string          `opt:"excludeScenarios"`
	ExcludeTags      map[string]string `opt:"excludeTags"`
	KeepSetup        bool              `opt:"keepSetup"`
	// MinStage given is above 0 (a stage of no length means nothing);
	// absent, the collector's own, relative to the calls.
	MinStage time.Duration `opt:"minStage,positive" want:"a duration above 0 like '10s'"`
}

// collect is the JS `collect(options)`: in the init context it sets what the
// report leaves out (warm-up window, scenarios, tagged calls; setup() and
// teardown() calls unless keepSetup) before any call is collected. Every VU
// runs the init code, so the same options may come many times; different
// ones are an error, as is a call after the test has started collecting.
func (rp Reporter) Collect(opts sobek.Value) (map[string]any, error) {
	if rp.VU.InitEnv() == nil {
		return nil, errors.New("collect() must be called in the init context (top level of the script), " +
			"before any call: the report is collected while the test runs")
	}
	var o collectOptions
	if err := k6env.DecodeOptions(opts, "collect() options", &o); err != nil {
		return nil, err
	}
	ro := report.Options{MinStage: o.MinStage, Exclude: report.Exclude{
		Warmup: o.Warmup, Scenarios: o.ExcludeScenarios, Tags: o.ExcludeTags, KeepSetup: o.KeepSetup,
	}}
	if err := ro.Validate(); err != nil {
		return nil, fmt.Errorf("collect() options: %w", err)
	}
	if err := rp.State.SetOptions(ro); err != nil {
		return nil, err
	}
	return map[string]any{"warmup": o.Warmup.String(), "excludeScenarios": o.ExcludeScenarios,
		"excludeTags": o.ExcludeTags, "keepSetup": o.KeepSetup}, nil
}

// dispatchAccount is the report's account of what was not sent on time:
// every schedule's counters and k6's dropped_iterations from
// handleSummary's data (nil when there is nothing to say).
func dispatchAccount(rt *sobek.Runtime, list *load.ScheduleList, data sobek.Value) *runrecord.Dispatch {
	d := &runrecord.Dispatch{}
	for _, s := range list.All() {
		st := s.Current().Stats()
		if s.IsSearched() && st.Claimed == 0 {
			continue // only the search's arrivals: its own section accounts for them
		}
		ss := runrecord.ScheduleStats{Name: s.Name, Kind: st.Kind, Claimed: st.Claimed, Late: st.Late, Dropped: st.Dropped,
			MaxLagMS: float64(st.MaxLag) / float64(time.Millisecond)}
		if s.Tr != nil {
			ss.Trace = load.TraceSummary(s)
			if r, ok := s.Reuse.(float64); ok {
				ss.PrefixReuse = &r
			}
		}
		d.Schedules = append(d.Schedules, ss)
	}
	if n, ok := summaryValue(rt, data, "dropped_iterations", "count"); ok && n > 0 {
		d.K6Dropped = &n
		vusMax, _ := summaryValue(rt, data, "vus_max", "max")
		iterations, _ := summaryValue(rt, data, "iterations", "count")
		iterMS, _ := summaryValue(rt, data, "iteration_duration", "avg")
		runMS, _ := summaryState(rt, data, "testRunDurationMs")
		d.K6Shortfall = runrecord.NewVUShortfall(vusMax, iterations, n, runMS/1000, iterMS/1000)
	}
	if len(d.Schedules) == 0 && d.K6Dropped == nil {
		return nil
	}
	return d
}

// summaryValue reads data.metrics[metric].values[stat] of handleSummary's
// data (false when k6 has no such metric).
func summaryValue(rt *sobek.Runtime, data sobek.Value, metric, stat string) (float64, bool) {
	return summaryPath(rt, data, "metrics", metric, "values", stat)
}

// summaryState reads data.state[key] (testRunDurationMs).
func summaryState(rt *sobek.Runtime, data sobek.Value, key string) (float64, bool) {
	return summaryPath(rt, data, "state", key)
}

// summaryPath walks the JS object (handleSummary's data holds Go values
// that Export does not turn into plain maps).
func summaryPath(rt *sobek.Runtime, data sobek.Value, path ...string) (float64, bool) {
	v := data
	for _, key := range path {
		if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
			return 0, false
		}
		o := v.ToObject(rt)
		if o == nil {
			return 0, false
		}
		v = o.Get(key)
	}
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return 0, false
	}
	return v.ToFloat(), true
}

// segmentOf is the execution segment this instance runs ("" alone or not
// known), for the sections each instance decides on its own.
func segmentOf(sc k6env.VUScope) string {
	share, ok, err := sc.ExecutionShare()
	if !ok || err != nil || share.Full() {
		return ""
	}
	return share.Segment()
}
