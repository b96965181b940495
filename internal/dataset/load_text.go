package dataset

import "strings"

// readText makes one user prompt of every non-blank line.
func readText(data []byte) []record {
	var recs []record
	_ = eachLine(data, func(line int, raw []byte) error {
		s := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(s) != "" {
			recs = append(recs, record{line: line, messages: []Message{{Role: "user", Content: s}}})
		}
		return nil
	})
	return recs
}
