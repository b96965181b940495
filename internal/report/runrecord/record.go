package runrecord

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
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
	// Retrieval is the embed and rerank calls' section; Images is the chat
	// calls' TTFT by the images in their prompts (sections.go).
	Retrieval []RetrievalRecord `json:"retrieval,omitempty"`
	Images    []ImageRecord     `json:"images,omitempty"`
	// Conversations is the live conversations' section: TTFT by turn and
	// the jobs (conversations.go).
	Conversations *ConversationRecord `json:"conversations,omitempty"`
	// Run is how the run was made (load shape, data, clients, versions, segment).
	Run *RunInfo `json:"run,omitempty"`
	// Instances lists the records a merged record was made of.
	Instances []InstanceRecord `json:"instances,omitempty"`
	// Server is what the servers' own /metrics counted (serverMetrics);
	// a merged record keeps each endpoint once (servermetrics.Merge).
	Server []servermetrics.View `json:"server,omitempty"`

	// Source is the file it was read from, for messages; Seed is the
	// collector's seed, for the comparison's bootstrap (0: read from a file).
	Source string `json:"-"`
	Seed   uint64 `json:"-"`
}

// CategoryRecord summarises one category.
type CategoryRecord struct {
	Requests     uint64                   `json:"requests"`
	Failures     uint64                   `json:"failures"`
	Errors       map[string]uint64        `json:"errors,omitempty"`
	CacheHitRate *float64                 `json:"cache_hit_rate,omitempty"`
	CacheHits    uint64                   `json:"cache_hits"`
	CacheMisses  uint64                   `json:"cache_misses"`
	Stalls       uint64                   `json:"stalls"`
	OutputTokens int64                    `json:"output_tokens"`
	Metrics      map[string]*MetricRecord `json:"metrics"`
	Cost         *CostRecord              `json:"cost,omitempty"` // only when the client had prices
	// GapsUnsampled: gaps the gap-sample cap kept out of k6's llm_inter_token_gap.
	GapsUnsampled uint64 `json:"gaps_unsampled,omitempty"`
	// FinishOmitted: complete answers whose server named no finish reason.
	FinishOmitted uint64 `json:"finish_omitted,omitempty"`
	// Samples is a uniform random sample of successful calls (reservoir), per
	// metric name ("ttft", "e2e", "tpot"), in ms: the bootstrap resamples it.
	Samples     map[string][]float64 `json:"samples,omitempty"`
	SamplesSeen uint64               `json:"samples_seen,omitempty"`
	// Tallies are the group's other exact counters (absent from records
	// written before they were kept: then the rules that read them stay
	// silent on a merged record).
	Tallies *Tallies `json:"tallies,omitempty"`
}

// MetricRecord is one distribution: headline figures plus the full sketch.
type MetricRecord struct {
	Count  uint64         `json:"count"`
	Mean   float64        `json:"mean"`
	P50    float64        `json:"p50"`
	P95    float64        `json:"p95"`
	P99    float64        `json:"p99"`
	Min    float64        `json:"min"`
	Max    float64        `json:"max"`
	Sketch *sketch.Sketch `json:"sketch"`
}

// StageRecord is one load stage of the run.
type StageRecord struct {
	Concurrency        float64 `json:"concurrency"`       // VUs, or the arrival rate when by_rate
	ByRate             bool    `json:"by_rate,omitempty"` // the stage is an arrival rate (requests/s)
	Calls              uint64  `json:"calls"`
	SteadySeconds      float64 `json:"steady_seconds"`
	TTFTP50            float64 `json:"ttft_p50"`
	TTFTP95            float64 `json:"ttft_p95"`
	TokensPerSecP50    float64 `json:"tokens_per_sec_p50"`
	RequestsPerSec     float64 `json:"requests_per_sec"`
	OutputTokensPerSec float64 `json:"output_tokens_per_sec"`
}

// LoadBaseline reads a run record written by MarshalRecord (or by an older
// version of this module, whose sketches it converts), checking it enough that
// a corrupt or foreign file gives an error, never a panic.
func LoadBaseline(data []byte) (*Record, error) { return ParseRecord("baseline", data) }

// ParseRecord is LoadBaseline with the file's name in every error.
func ParseRecord(name string, data []byte) (*Record, error) {
	var head struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("report: %s is not a JSON run record: %w", name, err)
	}
	if head.Format == nil {
		return nil, fmt.Errorf(`report: %s has no "format" field: not a run record`, name)
	}
	var rec *Record
	var err error
	switch *head.Format {
	case RecordFormat:
		rec = &Record{}
		err = json.Unmarshal(data, rec)
	case recordFormatV1:
		rec, err = parseRecordV1(data)
	default:
		return nil, fmt.Errorf("report: %s is a run record of format %d; this version reads formats %d and %d "+
			"(write it again with a matching version of xk6-llmstream)", name, *head.Format, recordFormatV1, RecordFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("report: %s (record format %d): %w", name, *head.Format, err)
	}
	if err := rec.check(); err != nil {
		return nil, fmt.Errorf("report: %s: %w", name, err)
	}
	rec.Format = RecordFormat // converted, if it was older
	rec.Source = name
	return rec, nil
}

func checkCategories(prefix string, cats map[string]*CategoryRecord) error {
	for cat, cr := range cats {
		if cr == nil {
			return fmt.Errorf("%scategory %q is null", prefix, cat)
		}
		for name, mr := range cr.Metrics {
			if mr == nil || mr.Sketch == nil {
				return fmt.Errorf("%s%s/%s has no sketch", prefix, cat, name)
			}
			if err := mr.Sketch.Validate(); err != nil {
				return fmt.Errorf("%s%s/%s: %w", prefix, cat, name, err)
			}
		}
		for name, vs := range cr.Samples {
			for _, v := range vs {
				if math.IsNaN(v) || v < 0 {
					return fmt.Errorf("%s%s/%s has an invalid sample %v", prefix, cat, name, v)
				}
			}
		}
	}
	return nil
}

// check validates what JSON decoding cannot: every figure a report reads is there and sane.
func (rec *Record) check() error {
	if len(rec.Categories) == 0 {
		return errors.New("record has no categories (was the run empty?)")
	}
	if err := checkCategories("", rec.Categories); err != nil {
		return err
	}
	for name, cl := range rec.Clients {
		if cl == nil {
			return fmt.Errorf("client %q is null", name)
		}
		if err := checkCategories("client "+name+": ", cl.Categories); err != nil {
			return err
		}
	}
	return nil
}

// P95 is the baseline's 95th percentile of a duration metric ("ttft", "e2e",
// "tpot", "gap"…) for a category (or "all"); ok is false when the baseline
// has no such figure. The k6 module uses it for the live llm_regression rate.
func (r *Record) P95(category, metric string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	return p95Of(r.Categories, category, metric)
}

// ClientP95 is P95 for one client's calls when the record kept them apart
// (a run of several clients), else for the whole run.
func (r *Record) ClientP95(client, category, metric string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	if cr := r.Clients[ClientLabel(client)]; cr != nil {
		return p95Of(cr.Categories, category, metric)
	}
	return p95Of(r.Categories, category, metric)
}

func p95Of(cats map[string]*CategoryRecord, category, metric string) (time.Duration, bool) {
	m, known := MetricByName(metric)
	cr := cats[category]
	if !known || !m.IsDuration() || cr == nil {
		return 0, false
	}
	mr := cr.Metrics[metric]
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

// AllCategories is the row that aggregates every category.
const AllCategories = "all"

// FiniteOr0 is v, or 0 when v is NaN or infinite: JSON has neither, so a figure
// the record cannot state is stored as 0.
func FiniteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
