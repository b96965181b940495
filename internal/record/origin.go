package record

import "time"

// Origin is who made a call and what it was: everything the binding knows
// of a route before the call leaves, and the record keeps of it after. The
// binding's route info embeds it and a Call embeds the one of the route that
// ended the call, so a call's identity is written once, where the plan is
// made, and every reader (the k6 samples' tags, the JS result, the report)
// reads the same fields.
type Origin struct {
	Name     string // the client: its name, else its base URL (servedBy, the name tag)
	Route    string // "primary" or "fallback"
	Protocol string // the wire format the call spoke (the protocol tag)
	// Model is the model the client asked for ("" when none); the server's
	// is Result.Model.
	Model    string
	Category string // from the call's tags ("" = the report's "default")
	Scenario string // k6's scenario ("" outside one)
	ItemID   string // the dataset item the prompt came from ("" when none), for paired comparisons
	// SharedPrefix: the prompt came from a shared-prefix dataset set (for
	// cache_busted).
	SharedPrefix bool
	// Phase is "setup" or "teardown" for calls made there, "" during the test.
	Phase string
	// TestStart is when k6 started the test (zero when unknown): a warm-up
	// window is counted from it.
	TestStart time.Time
	// Rate is the arrival rate (iterations/s) an arrival-rate executor was
	// running at when the call started, 0 for other executors: with those,
	// the load level is the rate, not the VU count.
	Rate float64
	// Turn is the call's turn in a live conversation (1 for the first), 0
	// for a call that is not one (result.turn null).
	Turn int

	// GapSamples is the client's gapSamples mode (config.Gaps…): which gaps
	// k6 gets.
	GapSamples string
	// ResultGaps is whether the call asked for result.gaps.
	ResultGaps bool

	// RequestBytes is the request body's size (0 for a GET).
	RequestBytes int64
	// Images, ImageBytes and ImagePixels are the pictures the dataset item
	// attached to the prompt: how many, their encoded bytes and their pixels
	// (0 when a file's size could not be read): image tokens cost prefill,
	// so the report splits TTFT by them.
	Images                  int
	ImageBytes, ImagePixels int64

	// TraceID is the W3C trace id the call's requests carried (the client's
	// tracing option: its own, or the one of a traceparent the script set),
	// in lowercase hex; "" without tracing, or when the script's header is
	// not a valid traceparent.
	TraceID string
}
