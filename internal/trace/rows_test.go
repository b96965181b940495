package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// row is one row as written, to compare with what the store gives back.
type row struct {
	at      int64
	in, out int32
	ids     []uint32
}

// lengthFor draws a row's input length to fit n ids of bs tokens.
func lengthFor(r *rand.Rand, n int, bs int64) int32 {
	return int32(int64(n-1)*bs + 1 + r.Int64N(bs)) //nolint:gosec // small test values
}

// mooncakeRows are rows as the published Mooncake traces have them: a run
// of ids shared with earlier rows (one of a few hundred prefixes), then ids
// never seen before, numbered in order; a row every 0–200 ms, ties included.
func mooncakeRows(r *rand.Rand, n int) []row {
	rows := make([]row, n)
	next := uint32(1_000_000)
	var at int64
	for i := range rows {
		blocks := 1 + r.IntN(30)
		p := uint32(r.IntN(300)) //nolint:gosec // small
		ids := make([]uint32, blocks)
		for b := range ids {
			if b < 4 {
				ids[b] = p*4 + uint32(b) //nolint:gosec // small
			} else {
				ids[b] = next
				next++
			}
		}
		if r.IntN(4) > 0 {
			at += int64(r.IntN(200)) * 1000
		}
		rows[i] = row{at: at, in: lengthFor(r, blocks, 512), out: int32(1 + r.IntN(2000)), ids: ids} //nolint:gosec // small
	}
	return rows
}

// oddRows are rows whose ids follow no pattern: random 32-bit ids, repeats
// within a row, the largest id followed by the smallest, long runs, and
// offsets that jump by days.
func oddRows(r *rand.Rand, n int, bs int64) []row {
	rows := make([]row, n)
	var at int64
	for i := range rows {
		var ids []uint32
		switch i % 5 {
		case 0:
			for range 1 + r.IntN(8) {
				ids = append(ids, r.Uint32())
			}
		case 1:
			id := r.Uint32()
			ids = []uint32{id, id, id, 7, 7, 8, 8}
		case 2:
			ids = []uint32{math.MaxUint32 - 1, math.MaxUint32, 0, 1, 2}
		case 3:
			start := r.Uint32N(1000)
			for k := range uint32(300) {
				ids = append(ids, start+k)
			}
		case 4:
			ids = []uint32{0}
		}
		at += r.Int64N(3) * r.Int64N(1<<36)
		rows[i] = row{at: at, in: lengthFor(r, len(ids), bs), out: r.Int32N(math.MaxInt32), ids: ids}
	}
	return rows
}

func store(rows []row, bs int) *rowStore {
	s := newRowStore(bs)
	for _, w := range rows {
		s.add(w.at, w.in, w.out, w.ids)
	}
	s.clip()
	return s
}

// requireRoundTrip reads every row back: in order from the first, from any
// row on, and each alone.
func requireRoundTrip(t *testing.T, rows []row, bs int) {
	t.Helper()
	s := store(rows, bs)
	require.Equal(t, len(rows), s.n)
	read := func(c *rowCursor) row {
		var ids []uint32
		at, in, out := c.next(&ids)
		return row{at: at, in: in, out: out, ids: ids}
	}
	all := s.cursor(0)
	for i, want := range rows {
		require.Equal(t, want, read(&all), "row %d read in order", i)
	}
	for _, from := range []int{0, 1, markEvery - 1, markEvery, markEvery + 1, len(rows) / 2, len(rows) - 1} {
		if from < 0 || from >= len(rows) {
			continue
		}
		c := s.cursor(from)
		for i := from; i < min(from+2*markEvery, len(rows)); i++ {
			require.Equal(t, rows[i], read(&c), "row %d read on from row %d", i, from)
		}
		one := s.cursor(from)
		require.Equal(t, rows[from], read(&one), "row %d alone", from)
	}
}

func TestRowStoreRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // test data
	t.Run("mooncake-shaped", func(t *testing.T) { requireRoundTrip(t, mooncakeRows(r, 1000), 512) })
	t.Run("odd ids", func(t *testing.T) { requireRoundTrip(t, oddRows(r, 700, 16), 16) })
	t.Run("one row", func(t *testing.T) { requireRoundTrip(t, oddRows(r, 1, 512), 512) })
	t.Run("no ids", func(t *testing.T) {
		rows := make([]row, 300)
		for i := range rows {
			rows[i] = row{at: int64(i / 3 * 1500), in: r.Int32N(100_000) + 1, out: r.Int32N(1000)}
		}
		requireRoundTrip(t, rows, 0)
	})
	t.Run("empty", func(t *testing.T) {
		s := store(nil, 512)
		require.Zero(t, s.n)
		require.Zero(t, s.cursor(0).i)
		require.Equal(t, int64(-1), s.maxID())
	})
}

// The published Mooncake traces' shape in a few bytes a row: flat arrays
// took 20 bytes a row and 4 an id (80 for 15 ids).
func TestMooncakeShapedRowsAreCompact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4)) //nolint:gosec // test data
	rows := mooncakeRows(r, 20_000)
	ids := 0
	for _, w := range rows {
		ids += len(w.ids)
	}
	s := store(rows, 512)
	perRow := float64(s.bytes()) / float64(len(rows))
	t.Logf("%d rows, %.1f ids a row: %.2f bytes a row", len(rows), float64(ids)/float64(len(rows)), perRow)
	require.Less(t, perRow, 16.0)
}

// A Mooncake file read whole gives back every row as written: offsets to
// the microsecond, lengths, and ids consecutive or not.
func TestReadKeepsEveryRow(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6)) //nolint:gosec // test data
	rows := append(mooncakeRows(r, 500), oddRows(r, 200, 512)...)
	var sb strings.Builder
	var at int64
	for i := range rows {
		if i >= 500 { // the odd rows' times, kept in order after the others
			at += rows[i].at % 10_000_000
			rows[i].at = at
		} else {
			at = rows[i].at
		}
		ids := idList(rows[i].ids)
		// timestamps in ms with a µs fraction, as some tools write them
		fmt.Fprintf(&sb, "{\"timestamp\": %d.%03d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": %s}\n",
			rows[i].at/1000, rows[i].at%1000, rows[i].in, rows[i].out, ids)
	}
	tr, err := readString(sb.String(), Options{})
	require.NoError(t, err)
	require.Equal(t, len(rows), tr.Rows())
	next := tr.OffsetsFrom(0)
	base := rows[0].at // offsets count from the first row
	for i, w := range rows {
		got := tr.Row(i)
		require.Equal(t, Row{Offset: float64(w.at-base) / 1e6, Input: w.in, Output: w.out}, got, "row %d", i)
		require.Equal(t, w.ids, tr.HashIDs(i), "row %d", i)
		require.Equal(t, got.Offset, next(), "row %d in order", i)
	}
	require.InDelta(t, float64(rows[len(rows)-1].at-base)/1e6, tr.Span(), 1e-9)
}

func idList(ids []uint32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
