package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// jsonRow is a Mooncake or Bailian line. Mooncake: timestamp in ms since the
// first request, hash_ids of 512-token blocks. Bailian: timestamp in
// seconds, chat_id/parent_chat_id/turn, hash_ids of 16-token blocks.
type jsonRow struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	HashIDs      hashIDs  `json:"hash_ids"`
	ChatID       *int64   `json:"chat_id"`
	ParentChatID *int64   `json:"parent_chat_id"`
	Turn         *int64   `json:"turn"`
}

// maxLine bounds one line (a 128k-token Bailian prompt has 8 000 ids).
const maxLine = 16 << 20

func readJSONL(r *bufio.Reader, b *builder) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	ms := b.t.Format == Mooncake
	var row jsonRow
	line := 0
	for !b.done && sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		row = jsonRow{HashIDs: hashIDs{ids: row.HashIDs.ids[:0]}} // the ids' buffer serves every row
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
		if row.HashIDs.bad != "" {
			return &Error{File: b.t.Name, Line: line, Reason: fmt.Sprintf("hash id %s is not a non-negative 32-bit integer", row.HashIDs.bad)}
		}
		if row.Turn != nil && *row.Turn > 1 {
			b.t.Turns++
		}
		if err := b.add(line, ts, *row.InputLength, *row.OutputLength, row.HashIDs.ids); err != nil {
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
	case !r.HashIDs.set:
		return missing("hash_ids")
	case format == Bailian && r.ChatID == nil:
		return missing("chat_id")
	}
	return nil
}

// hashIDs decodes a row's hash_ids straight into 32-bit ids: encoding/json's
// own path for a list of numbers was half the time a million-row trace took
// to read. bad is the first element that is not a non-negative 32-bit
// integer (whole numbers written as 3.0 or 3e2 pass, as they did as floats).
type hashIDs struct {
	ids []uint32
	set bool // the row has the column (null is missing)
	bad string
}

func (h *hashIDs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	h.set = true
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		h.bad = string(b)
		return nil
	}
	list := bytes.TrimSpace(b[1 : len(b)-1])
	for len(list) > 0 {
		var tok []byte
		tok, list, _ = bytes.Cut(list, []byte(","))
		tok = bytes.TrimSpace(tok)
		if id, ok := digits(tok); ok {
			h.ids = append(h.ids, id)
			continue
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil || f < 0 || f > math.MaxUint32 || f != math.Trunc(f) {
			h.bad = string(tok)
			return nil //nolint:nilerr // not a JSON error: the row's reader reports the bad id with its file and line
		}
		h.ids = append(h.ids, uint32(f))
	}
	return nil
}

// digits reads a plain decimal 32-bit id.
func digits(tok []byte) (uint32, bool) {
	if len(tok) == 0 || len(tok) > 10 {
		return 0, false
	}
	var v uint64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return uint32(v), v <= math.MaxUint32 // #nosec G115 -- ok says whether it fits
}
