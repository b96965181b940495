package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// jsonRow is a Mooncake or Bailian line. Mooncake: timestamp in ms since the
// first request, hash_ids of 512-token blocks. Bailian: timestamp in
// seconds, chat_id/parent_chat_id/turn, hash_ids of 16-token blocks.
type jsonRow struct {
	Timestamp    *float64  `json:"timestamp"`
	InputLength  *int64    `json:"input_length"`
	OutputLength *int64    `json:"output_length"`
	HashIDs      []float64 `json:"hash_ids"`
	ChatID       *int64    `json:"chat_id"`
	ParentChatID *int64    `json:"parent_chat_id"`
	Turn         *int64    `json:"turn"`
}

// maxLine bounds one line (a 128k-token Bailian prompt has 8 000 ids).
const maxLine = 16 << 20

func readJSONL(r *bufio.Reader, b *builder) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	ms := b.t.Format == Mooncake
	var ids []uint32
	line := 0
	for !b.done && sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var row jsonRow
		if err := json.Unmarshal(raw, &row); err != nil {
			return &Error{File: b.t.Name, Line: line, Reason: "unreadable row: " + err.Error()}
		}
		if err := row.check(b.t.Format); err != nil {
			return &Error{File: b.t.Name, Line: line, Reason: err.Error()}
		}
		ts := *row.Timestamp
		if ts < 0 {
			return &Error{File: b.t.Name, Line: line, Reason: fmt.Sprintf("timestamp %v is negative", ts)}
		}
		if ms {
			ts /= 1000
		}
		ids = ids[:0]
		for _, h := range row.HashIDs {
			if h < 0 || h > math.MaxUint32 || h != math.Trunc(h) {
				return &Error{File: b.t.Name, Line: line, Reason: fmt.Sprintf("hash id %v is not a non-negative 32-bit integer", h)}
			}
			ids = append(ids, uint32(h))
		}
		if row.Turn != nil && *row.Turn > 1 {
			b.t.Turns++
		}
		if err := b.add(line, ts, *row.InputLength, *row.OutputLength, ids); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &Error{File: b.t.Name, Line: line + 1, Reason: fmt.Sprintf("a line longer than %d bytes", maxLine)}
		}
		if !errors.Is(err, io.EOF) {
			return &Error{File: b.t.Name, Line: line + 1, Reason: err.Error()}
		}
	}
	return nil
}

// check names the first missing column.
func (r *jsonRow) check(format string) error {
	missing := func(c string) error {
		return fmt.Errorf("missing %q (a %s row has timestamp, input_length, output_length, hash_ids)", c, format)
	}
	switch {
	case r.Timestamp == nil:
		return missing("timestamp")
	case r.InputLength == nil:
		return missing("input_length")
	case r.OutputLength == nil:
		return missing("output_length")
	case r.HashIDs == nil:
		return missing("hash_ids")
	case format == Bailian && r.ChatID == nil:
		return missing("chat_id")
	}
	return nil
}
