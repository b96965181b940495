package report

// Jobs by load stage: a conversation or agent job spans many calls, which
// may start in several stages of a step load; it is counted in the stage
// its first call was sent in, the load its user arrived into. Only stages
// the calls found (collect_stages.go) have rows: a job that started during a ramp
// is in the jobs table but in no stage.

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// levelJobKey is a job group of one load class.
type levelJobKey struct {
	Class int
	jobKey
}

// loadClass is the load class of a job's first call, as levelClass keys the
// calls themselves.
func loadClass(l record.Load) int {
	return levelClass(&Observation{Active: l.Active, VUs: l.VUs, Origin: record.Origin{Rate: l.Rate}})
}

// JobStage is the jobs whose first call was sent in one load stage.
type JobStage struct {
	Concurrency float64 // the stage's level: mean VUs, or the arrival rate when ByRate
	ByRate      bool
	First, Last time.Time // the stage's first and last call start
	Jobs        []*JobGroup
}

// JobStages are the run's stages that had jobs start in them, lowest level
// first; none when the run had fewer than two stages (the jobs table is
// then the one stage).
func (r *Run) JobStages() []JobStage {
	stages := r.Stages()
	if len(stages) < 2 || len(r.jobLevels) == 0 {
		return nil
	}
	var out []JobStage
	for _, st := range stages {
		if gs := r.jobLevels[st.Class]; len(gs) > 0 {
			out = append(out, JobStage{Concurrency: st.Concurrency, ByRate: st.ByRate, First: st.First, Last: st.Last, Jobs: gs})
		}
	}
	return out
}
