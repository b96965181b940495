package runrecord

import "time"

// ConversationRecord is the section in the run record.
type ConversationRecord struct {
	Turns []TurnRecord `json:"turns,omitempty"`
	Jobs  []JobRecord  `json:"jobs,omitempty"`
	// Stages are the jobs by the load stage their first call was sent in
	// (the report's collect_job_stages.go); StageNote says why a merged record has none.
	Stages    []JobStageRecord `json:"stages,omitempty"`
	StageNote string           `json:"stage_note,omitempty"`
}

// TurnRecord is one turn group in the run record.
type TurnRecord struct {
	Turn  int           `json:"turn"` // the last row holds that turn and later ones
	Cache string        `json:"cache"`
	Calls uint64        `json:"calls"`
	TTFT  *MetricRecord `json:"ttft"`
}

// JobRecord is one job group in the run record (times in ms, means per job).
type JobRecord struct {
	Kind      string        `json:"kind"`
	Category  string        `json:"category"`
	Jobs      uint64        `json:"jobs"`
	Failed    uint64        `json:"failed"`
	Duration  *MetricRecord `json:"duration"`
	ModelMean float64       `json:"model_mean"`
	ThinkMean float64       `json:"think_mean"`
	ToolMean  float64       `json:"tool_mean"`
	TurnsMean float64       `json:"turns_mean"`
	StepsMean float64       `json:"steps_mean"`
	TokensOut int64         `json:"tokens_out"`
}

// JobStageRecord is one stage's jobs in the run record.
type JobStageRecord struct {
	Concurrency float64     `json:"concurrency"`       // VUs, or the arrival rate when by_rate
	ByRate      bool        `json:"by_rate,omitempty"` // the stage is an arrival rate (requests/s)
	First       time.Time   `json:"first"`             // the stage's first call start
	Last        time.Time   `json:"last"`              // and its last
	Jobs        []JobRecord `json:"jobs"`
}
