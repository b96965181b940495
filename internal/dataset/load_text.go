package dataset

import (
	"bytes"
	"strings"
)

// readText makes one user prompt of every non-blank line.
func readText(data []byte) []record {
	var recs []record
	line := 0
	for len(data) > 0 {
		line++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		s := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		recs = append(recs, record{line: line, messages: []Message{{Role: "user", Content: s}}})
	}
	return recs
}
