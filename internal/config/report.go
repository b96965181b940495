package config

import "time"

// Report is what report(data, options) takes in handleSummary.
type Report struct {
	HTML     string         `opt:"html"`     // file name of the HTML report; "" = none
	JSON     string         `opt:"json"`     // file name of the run record; "" = none
	Baseline string         `opt:"baseline"` // a run record to compare with (path)
	Title    string         `opt:"title"`
	Meta     map[string]any `opt:"meta"`   // added to the run record's metadata
	Stdout   bool           `opt:"stdout"` // k6's summary and the LLM section on stdout
	// MinStage overrides how long a load level must hold to be a stage
	// (absent, 0: collect()'s, or relative to the calls); given, it is above
	// 0, as a stage of no length means nothing.
	MinStage time.Duration `opt:"minStage,positive" want:"a duration above 0 like '10s'"`
}

// DefaultReport is report() without options: the text on stdout, no files.
func DefaultReport() Report { return Report{Stdout: true} }
