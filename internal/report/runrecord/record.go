package runrecord

import (
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// RecordFormat is the version of the run-record layout. Format 2 stores
// sketches in sketches-go's encoding; format 1 (the module's own sketch
// layout) is still read and converted. A reader refuses other versions rather
// than misread them.
const RecordFormat = 2

// Record is the JSON run record: what a later run loads as its baseline.
type Record struct {
	Format     int                        `json:"format"`
	Meta       map[string]any             `json:"meta,omitempty"` // k6/module versions, options, seed, dataset fingerprint… as given
	Start      time.Time                  `json:"start"`
	End        time.Time                  `json:"end"`
	Categories map[string]*CategoryRecord `json:"categories"` // every category and "all"
	Stages     []StageRecord              `json:"stages,omitempty"`
	StageNote  string                     `json:"stage_note,omitempty"` // why no stages could be compared
	Waves      []WaveRecord               `json:"waves,omitempty"`
	// With several clients: each client's own figures, stages and waves
	// (ClientRecord), the routes, and the paired comparisons.
	Clients    map[string]*ClientRecord `json:"clients,omitempty"`
	Routes     []RouteRecord            `json:"routes,omitempty"`
	Paired     []PairedComparison       `json:"paired,omitempty"`
	Findings   []Finding                `json:"findings"`
	Comparison *Comparison              `json:"comparison,omitempty"`
	// Excluded says which calls were left out of every figure above and why.
	Excluded *Exclusions `json:"excluded,omitempty"`
	// Dispatch is what the test offered and did not send on time.
	Dispatch *Dispatch `json:"dispatch,omitempty"`
	// Capacity is a capacity search's answer (Capacity.search).
	Capacity *Capacity `json:"capacity,omitempty"`
	// Pareto is each load level's output tokens/s against its per-user
	// tokens/s, from the stages and the capacity windows (pareto.go).
	Pareto []ParetoPoint `json:"pareto,omitempty"`
	// Precision is a precision gate's verdict (Precision.until).
	Precision *Precision `json:"precision,omitempty"`
	// Retrieval is the embed and rerank calls' section; Images is the chat
	// calls' TTFT by the images in their prompts (sections.go).
	Retrieval []RetrievalRecord `json:"retrieval,omitempty"`
	Images    []ImageRecord     `json:"images,omitempty"`
	// Conversations is the live conversations' section: TTFT by turn and
	// the jobs (conversations.go).
	Conversations *ConversationRecord `json:"conversations,omitempty"`
	// Run is how the run was made (load shape, data, clients, versions, segment).
	Run *RunInfo `json:"run,omitempty"`
	// Interrupted says the run was stopped before its planned end (nil when
	// it ran to it).
	Interrupted *Interruption `json:"interrupted,omitempty"`
	// Instances lists the records a merged record was made of.
	Instances []InstanceRecord `json:"instances,omitempty"`
	// Server is what the servers' own /metrics counted (serverMetrics);
	// a merged record keeps each endpoint once (servermetrics.Merge).
	Server []servermetrics.View `json:"server,omitempty"`
	// NonFinite lists the places (JSON Pointers) of numbers that were NaN
	// or ±Inf when the record was written, each written as null (Encode).
	NonFinite []string `json:"non_finite,omitempty"`

	// Source is the file it was read from, for messages; Seed is the
	// collector's seed, for the comparison's bootstrap (0: read from a file).
	Source string `json:"-"`
	Seed   uint64 `json:"-"`
}

// P95 is the baseline's 95th percentile of a duration distribution
// (record.DistTTFT, DistE2E…) for a category (or "all"); ok is false when
// the baseline has no such figure. The k6 module uses it for the live
// llm_regression rate.
func (r *Record) P95(category string, d record.Dist) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	return p95Of(r.Categories, category, d)
}

// ClientP95 is P95 for one client's calls when the record kept them apart
// (a run of several clients), else for the whole run.
func (r *Record) ClientP95(client, category string, d record.Dist) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	if cr := r.Clients[ClientLabel(client)]; cr != nil {
		return p95Of(cr.Categories, category, d)
	}
	return p95Of(r.Categories, category, d)
}

func p95Of(cats map[string]*CategoryRecord, category string, d record.Dist) (time.Duration, bool) {
	_, known := record.DistByName(d.String())
	cr := cats[category]
	if !known || !d.IsDuration() || cr == nil {
		return 0, false
	}
	mr := cr.Metrics[d.String()]
	if mr == nil || mr.Count == 0 || math.IsNaN(mr.P95) {
		return 0, false
	}
	return time.Duration(mr.P95 * float64(time.Millisecond)), true
}

// ClientRecord is one client's part of the run record when the run had
// several: its categories (with the raw samples a later run compares
// against), stages and waves.
type ClientRecord struct {
	Categories map[string]*CategoryRecord `json:"categories"`
	Stages     []StageRecord              `json:"stages,omitempty"`
	StageNote  string                     `json:"stage_note,omitempty"`
	Waves      []WaveRecord               `json:"waves,omitempty"`
}

// InstanceRecord is one of the records a merged record was made of.
type InstanceRecord struct {
	Source   string    `json:"source"`            // the file it was read from
	Segment  string    `json:"segment,omitempty"` // empty: the whole test
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Requests uint64    `json:"requests"`
	Findings []Finding `json:"findings,omitempty"` // what that instance's report found on its own share
}
