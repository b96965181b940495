package trace

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The CSV traces have no prefix identity: every prompt is built unique.
//   - BurstGPT: Timestamp (seconds, relative), Model, Request tokens,
//     Response tokens, Total tokens, Log Type; newer files add Session ID and
//     Elapsed time after Timestamp. Response tokens 0 is a failed request.
//   - Azure LLM inference (2023, 2024): TIMESTAMP (absolute, such as
//     2023-11-16 18:15:46.6805900), ContextTokens, GeneratedTokens.
var csvColumns = map[string][3]string{ //nolint:gochecknoglobals // read-only table
	BurstGPT: {"Timestamp", "Request tokens", "Response tokens"},
	Azure:    {"TIMESTAMP", "ContextTokens", "GeneratedTokens"},
}

// azureLayouts are the TIMESTAMP forms of the Azure files (a fraction of up
// to 7 digits, with or without a zone).
var azureLayouts = []string{ //nolint:gochecknoglobals // read-only table
	"2006-01-02 15:04:05.9999999", "2006-01-02 15:04:05.9999999Z07:00", "2006-01-02T15:04:05.9999999Z07:00",
	"2006-01-02 15:04:05.9999999 -0700 MST", "2006-01-02T15:04:05.9999999",
}

func readCSV(r *bufio.Reader, b *builder) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	name := b.t.Name
	header, err := cr.Read()
	if err != nil {
		return &Error{File: name, Line: 1, Reason: "no CSV header: " + err.Error()}
	}
	want := csvColumns[b.t.Format]
	var col [3]int
	for i, c := range want {
		col[i] = -1
		for j, h := range header {
			if strings.TrimSpace(h) == c {
				col[i] = j
			}
		}
		if col[i] < 0 {
			return &Error{File: name, Line: 1, Reason: fmt.Sprintf("missing column %q (a %s trace has %s)", c, b.t.Format, strings.Join(want[:], ", "))}
		}
	}
	var origin time.Time
	for !b.done {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return &Error{File: name, Line: line, Reason: "unreadable row: " + err.Error()}
		}
		if len(rec) <= max(col[0], col[1], col[2]) {
			return &Error{File: name, Line: line, Reason: fmt.Sprintf("%d fields, the header has %d", len(rec), len(header))}
		}
		var ts float64
		if b.t.Format == Azure {
			at, err := parseAzureTime(strings.TrimSpace(rec[col[0]]))
			if err != nil {
				return &Error{File: name, Line: line, Reason: err.Error()}
			}
			if origin.IsZero() {
				origin = at
			}
			ts = at.Sub(origin).Seconds()
		} else {
			ts, err = strconv.ParseFloat(strings.TrimSpace(rec[col[0]]), 64)
			if err != nil {
				return &Error{File: name, Line: line, Reason: fmt.Sprintf("Timestamp %q is not a number of seconds", rec[col[0]])}
			}
			if ts < 0 {
				return &Error{File: name, Line: line, Reason: fmt.Sprintf("Timestamp %v is negative", ts)}
			}
		}
		in, err1 := strconv.ParseInt(strings.TrimSpace(rec[col[1]]), 10, 64)
		out, err2 := strconv.ParseInt(strings.TrimSpace(rec[col[2]]), 10, 64)
		if err1 != nil || err2 != nil {
			return &Error{File: name, Line: line, Reason: fmt.Sprintf("%s %q and %s %q must be whole token counts",
				want[1], rec[col[1]], want[2], rec[col[2]])}
		}
		if b.t.Format == BurstGPT && out == 0 && !b.o.KeepFailed {
			// BurstGPT logs a failed request with 0 response tokens: it is
			// not a request the service answered, so it is not replayed
			// unless asked (keepFailed).
			if b.seen && ts < b.prev {
				return &Error{File: name, Line: line, Reason: fmt.Sprintf(
					"timestamp %v is before the previous row's %v: rows must be sorted by time", ts, b.prev)}
			}
			b.t.Skipped++
			b.prev = max(b.prev, ts)
			continue
		}
		if err := b.add(line, ts, in, out, nil); err != nil {
			return err
		}
	}
	return nil
}

func parseAzureTime(s string) (time.Time, error) {
	for _, l := range azureLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("TIMESTAMP %q is not a date and time such as 2023-11-16 18:15:46.6805900", s)
}
