package report

import (
	"fmt"
	"slices"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// capacityChangeFinding is capacity_dropped when the capacity fell against
// the baseline's by more than the searches can tell apart.
func capacityChangeFinding(ch *runrecord.CapacityChange, findings []runrecord.Finding) []runrecord.Finding {
	if ch == nil || ch.Verdict != runrecord.VerdictWorse {
		return findings
	}
	f := runrecord.Finding{
		ID: "capacity_dropped", Title: "The capacity at the objectives fell against the baseline", Severity: "warning",
		Evidence: []string{"capacity " + capacityChangeText(ch)},
		Advice: "The same objectives now hold at a lower load: the service, its configuration or the prompts changed. The " +
			"capacity windows show which objective bound it; the baseline rows say which figure moved. " + guideLink("capacity_dropped"),
	}
	if ch.DeltaPct != nil {
		f.Values = map[string]float64{"delta_pct": *ch.DeltaPct}
	}
	return append(findings, f)
}

// serverChangeFinding is server_regressed when a server figure got worse
// than the baseline's, one finding per client (or one for the run).
func serverChangeFinding(changes []runrecord.ServerChange, findings []runrecord.Finding) []runrecord.Finding {
	byClient := map[string][]string{}
	var order []string
	for _, c := range changes {
		if c.Verdict != runrecord.VerdictWorse {
			continue
		}
		if _, seen := byClient[c.Client]; !seen {
			order = append(order, c.Client)
		}
		byClient[c.Client] = append(byClient[c.Client], fmt.Sprintf("server %s against the baseline: %s", c.Endpoint, serverChangeText(c)))
	}
	for _, client := range order {
		findings = append(findings, runrecord.Finding{
			ID: "server_regressed", Title: "The server is worse than in the baseline, by its own figures", Severity: "warning",
			Evidence: byClient[client], Client: client,
			Advice: "The server's own /metrics moved against the baseline run: the change is on the server's side (engine " +
				"version or flags, model, hardware, other traffic on it), not in the network or this client. Compare how " +
				"the two servers were set up; the client's own comparison rows say how much a user felt it. " + guideLink("server_regressed"),
		})
	}
	return findings
}

// jobsChangeFinding is jobs_regressed when a job time got worse than the
// baseline's.
func jobsChangeFinding(changes []runrecord.JobChange, findings []runrecord.Finding) []runrecord.Finding {
	var evidence []string
	for _, c := range changes {
		if c.Verdict == runrecord.VerdictWorse {
			evidence = append(evidence, fmt.Sprintf("%s against the baseline: %s", c.Label(), jobChangeText(c)))
		}
	}
	if len(evidence) == 0 {
		return findings
	}
	return append(findings, runrecord.Finding{
		ID: "jobs_regressed", Title: "Conversations or agent jobs take longer than in the baseline", Severity: "warning",
		Evidence: evidence,
		Advice: "A job spans every turn, tool call and pause: compare its model time with its duration. Model time up: the " +
			"calls got slower (the baseline rows say which figure). Duration up with model time alike: more turns or steps, " +
			"longer tools or think time, or the job's script changed. " + guideLink("jobs_regressed"),
	})
}

// comparisonFindings adds the findings of a comparison with the baseline:
// the servers', the capacity's and the jobs' changes, and, when the runs'
// prefix caches differed, baseline_confounded, each of the others then
// saying that part of its change may be the cache's.
func comparisonFindings(c *runrecord.Comparison, findings []runrecord.Finding) []runrecord.Finding {
	if c == nil {
		return findings
	}
	n := len(findings)
	findings = serverChangeFinding(c.Server, findings)
	findings = capacityChangeFinding(c.Capacity, findings)
	findings = jobsChangeFinding(c.Jobs, findings)
	if c.Confounded == nil {
		return findings
	}
	for i := n; i < len(findings); i++ {
		f := &findings[i]
		f.Title += " (confounded: the runs' prefix caches differed)"
		f.Evidence = append(slices.Clone(f.Evidence), "the two runs saw different prefix-cache states (baseline_confounded): "+
			"part of this change may be the cache's, not the service's")
	}
	return slices.Insert(findings, n, confoundedFinding(c)) // the cause before the changes it qualifies
}

// confoundedFinding is baseline_confounded: the runs saw different
// prefix-cache states, so no verdict against the baseline can be put down
// to what was changed.
func confoundedFinding(c *runrecord.Comparison) runrecord.Finding {
	f := runrecord.Finding{
		ID: "baseline_confounded", Title: "The comparison with the baseline is confounded: the runs saw different prefix-cache states",
		Severity: "warning",
		Advice: "A prefix cache outlives a run: the same prompts sent again are served from what the first run left, so the " +
			"second reads faster with nothing changed (and a cold run after a warm one reads slower). Start both runs cold: a " +
			"dataset with cacheBust gives every draw a unique prefix, or reset the server's cache between runs (vLLM " +
			"POST /reset_prefix_cache, SGLang POST /flush_cache), or restart it. " + guideLink("baseline_confounded"),
		Values: map[string]float64{"margin": c.Confounded.Margin},
	}
	for _, s := range c.Confounded.By {
		f.Evidence = append(f.Evidence, s.String())
		if s.Source == "client" && s.Of == "" {
			f.Values["hit_rate"], f.Values["baseline_hit_rate"] = s.Current, s.Baseline
		}
	}
	return f
}
