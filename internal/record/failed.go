package record

// What a figure does with a failed call: its rule, one per row, which the
// JS result, the k6 samples and the report all follow (docs/metrics.md,
// "Failed calls").

// Failed is a figure's rule for a failed call.
type Failed uint8

// The rules.
const (
	// Counted: what a failed call measured before it failed (a TTFB, a
	// TTFT, the gaps it saw, the client's own lag and parse time) counts
	// everywhere as an answered call's does, its k6 samples tagged
	// error_type; what it did not measure is unknown, as for any call.
	Counted Failed = iota
	// AnswersOnly: the figure describes a complete answer (its E2E, its
	// decode pace, a verdict on it), which a failed call does not have:
	// null in its JS result, no k6 sample, nothing in the report. Such a
	// figure of a call cut short would mix a truncation's time into the
	// answers' (a server that fails fast would look faster).
	AnswersOnly
)

// String is the rule as docs/metrics.md's column names it.
func (r Failed) String() string {
	if r == AnswersOnly {
		return "answers only"
	}
	return "counted"
}

// Takes says whether the figure counts a call that answered (ok) or failed
// (!ok): for the report's own reading of a figure of many values per call
// (the gaps).
func (f *Figure[R]) Takes(ok bool) bool { return ok || f.Failed == Counted }

// answersOnly is f as a figure of a complete answer: a failed call has none
// of it, in its JS result, its samples and the report alike.
func answersOnly(f Figure[Call]) Figure[Call] {
	f.Failed = AnswersOnly
	if js := f.js; js != nil {
		f.js = func(c *Call) any {
			if !c.OK {
				return nil
			}
			return js(c)
		}
	}
	if samples := f.samples; samples != nil {
		f.samples = func(c *Call, e Emit) {
			if c.OK {
				samples(c, e)
			}
		}
	}
	if kept := f.kept; kept != nil {
		f.kept = func(c *Call) (float64, bool) {
			if !c.OK {
				return 0, false
			}
			return kept(c)
		}
	}
	return f
}
