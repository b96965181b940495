package calls

import (
	"context"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// A finished call fans out from one function, fanOut: to the JS result, to k6's
// samples (samples.go) and to the report's collector. Everything here only
// reads the outcome internal/policy produced.

// callLoad is the load a call met when it started.
type callLoad struct {
	active int       // streams in flight in this process
	vus    int       // k6's active VUs (0 outside a k6 run)
	due    time.Time // when the VU's schedule credit was due (zero: no schedule asked for the call)
}

// fanOut is the one place a finished call goes out: its record is built
// once, its samples are pushed to k6 in one batch, the record goes to the
// report, and its JS result is returned. Call-level figures (llm_requests,
// llm_failed, timings) describe the user's call — answered or not, by
// whichever route — once; llm_attempts counts every attempt by route. After
// the VU's context is done nothing is pushed to k6: a cancelled test stops
// emitting at once. A call the test's stop (a signal, test.abort(), a
// threshold's abortOnFail, the end of a scenario's graceful stop) came
// during gets no verdict, no sample and no capacity search, but the report
// still counts it (record.Call.Stopped says how): dropped, an interrupted
// run counted its cut calls nowhere, and the server's count held them
// against nothing. The record comes back with the result, for a
// conversation's job.
func fanOut(ctx context.Context, o *outcome, out chan<- metrics.SampleContainer, s Sinks, ld callLoad) *record.Call {
	rec := callRecord(o, ld)
	rec.Stopped = o.Canceled || ctx.Err() != nil
	if rec.Stopped {
		s.Report.Stop.NoteCut(ctx)
	} else {
		judge(o, rec, s.Report.Regression)
		metrics.PushIfNotDone(ctx, out, callSamples(s.Metrics, o, rec))
		s.Searches.Finish(rec)
		s.Gates.Finish(rec)
	}
	s.Report.Intake().Add(rec)
	return rec
}

// callRecord is the call's one record: the final attempt's figures, every
// attempt, and what the route and the process add.
func callRecord(o *outcome, ld callLoad) *record.Call {
	a := o.Final()
	info := a.Route.Info
	r := &callRecordAlloc{}
	attempts := r.first[:]
	if len(o.Attempts) != len(r.first) {
		attempts = make([]record.Attempt, len(o.Attempts))
	}
	r.rec = record.Call{
		Result: a.Result, Attempts: attempts, Origin: info.Origin,
		Tag: info.tagGet.lookup(info.tags.Tags), Active: ld.active, VUs: ld.vus, Due: ld.due,
		ClientLag: o.ClientLag, EventLag: time.Duration(info.eventLag.Load()),
	}
	rec := &r.rec
	for i, at := range o.Attempts {
		in := at.Route.Info
		rec.Attempts[i] = record.Attempt{Route: in.Route, Name: in.Name, Result: at.Result, Reconnects: at.Reconnects}
	}
	b := o.Price()
	rec.Cost, rec.Currency, rec.Priced = b.Cost, b.Currency, b.Priced
	return rec
}

// callRecordAlloc is a record with room for one attempt: one allocation
// for both, as nearly every call makes one attempt.
type callRecordAlloc struct {
	rec   record.Call
	first [1]record.Attempt
}

// judge adds what only a call that counts is judged by: the SLO, the
// baseline, and which of its gaps the gapSampleRate cap keeps (taking from
// the process's budget).
func judge(o *outcome, rec *record.Call, regress func(client, category string, ttft time.Duration) (bool, bool)) {
	info := o.Final().Route.Info
	if slo := info.slo; slo.Set() {
		rec.Goodput = record.VerdictOf(rec.OK && policy.Meets(slo, rec.Result))
	}
	if ttft, ok := rec.TTFT.Get(); rec.OK && ok {
		if slower, known := regress(info.Name, info.Category, ttft); known {
			rec.Regression = record.VerdictOf(slower)
		}
	}
	if info.GapSamples == config.GapsSampled && len(rec.Gaps) > 0 {
		keep, kept := info.gapSampler.TakeKeep(len(rec.Gaps))
		rec.KeepGap, rec.GapsUnsampled = keep, len(rec.Gaps)-kept
	}
}
