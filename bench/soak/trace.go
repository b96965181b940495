package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// traceLine is the part of an llm-sim --trace record the soak reads: when the
// server wrote each chunk of a request, and which fault it had.
type traceLine struct {
	RequestID string  `json:"request_id"`
	ChunksNS  []int64 `json:"chunks_ns"`
	Fault     string  `json:"fault"`
}

// serverGaps reads llm-sim's ground truth and says whether the server ever
// went silent: the longest pauses between consecutive chunk writes over all
// streams, and how many unfaulted requests had a gap between two of their own
// chunks above idle. If the server never paused, idle timeouts of unfaulted
// requests came from the client side (the reader or the whole process not
// running).
func serverGaps(path string, idle time.Duration) error {
	f, err := os.Open(path) // #nosec G304 -- the operator's path
	if err != nil {
		return err
	}
	defer f.Close()
	var all []int64
	requests, slowUnfaulted := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var t traceLine
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return fmt.Errorf("trace line: %w", err)
		}
		requests++
		all = append(all, t.ChunksNS...)
		if t.Fault != "" {
			continue
		}
		for i := 1; i < len(t.ChunksNS); i++ {
			if time.Duration(t.ChunksNS[i]-t.ChunksNS[i-1]) > idle {
				slowUnfaulted++
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	slices.Sort(all)
	type pause struct {
		at  time.Time
		gap time.Duration
	}
	var pauses []pause
	for i := 1; i < len(all); i++ {
		pauses = append(pauses, pause{time.Unix(0, all[i-1]), time.Duration(all[i] - all[i-1])})
	}
	slices.SortFunc(pauses, func(a, b pause) int { return int(b.gap - a.gap) })
	fmt.Printf("\nllm-sim ground truth (%s): %d requests, %d chunk writes; %d unfaulted requests had a gap > %s between their own chunks\n",
		path, requests, len(all), slowUnfaulted, idle)
	fmt.Print("  longest pauses in the server's writing, over all streams:")
	for _, p := range pauses[:min(3, len(pauses))] {
		fmt.Printf(" %s at %s;", p.gap.Round(time.Millisecond), p.at.Format("15:04:05.000"))
	}
	fmt.Println()
	return nil
}
