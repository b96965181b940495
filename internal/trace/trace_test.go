package trace

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

func readFile(t *testing.T, name string, o Options) *Trace {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // read only
	tr, err := Read(f, name, o)
	require.NoError(t, err)
	return tr
}

// offsets, inputs and outputs are the trace's columns, to compare whole.
func offsets(tr *Trace) []float64 {
	out := make([]float64, tr.Rows())
	for i := range out {
		out[i] = tr.Row(i).Offset
	}
	return out
}

func inputs(tr *Trace) []int32 {
	out := make([]int32, tr.Rows())
	for i := range out {
		out[i] = tr.Row(i).Input
	}
	return out
}

func outputs(tr *Trace) []int32 {
	out := make([]int32, tr.Rows())
	for i := range out {
		out[i] = tr.Row(i).Output
	}
	return out
}

func readString(s string, o Options) (*Trace, error) { return Read(strings.NewReader(s), "t.txt", o) }

func TestMooncake(t *testing.T) {
	tr := readFile(t, "mooncake.jsonl", Options{})
	require.Equal(t, Mooncake, tr.Format)
	require.Equal(t, 512, tr.BlockSize)
	require.Equal(t, []float64{0, 0, 0.35, 1.2}, offsets(tr), "ms since the first request, ties kept")
	require.Equal(t, []int32{1200, 700, 512, 1500}, inputs(tr))
	require.Equal(t, []int32{20, 5, 10, 30}, outputs(tr))
	require.Equal(t, []uint32{0, 1, 5}, tr.HashIDs(3))
	r, ok := tr.Reuse()
	require.True(t, ok)
	// row 2 reuses block 0 (512 tokens), row 4 blocks 0 and 1 (1024)
	require.InDelta(t, 1536.0/3912.0, r, 1e-12)
}

func TestBailian(t *testing.T) {
	tr := readFile(t, "bailian.jsonl", Options{})
	require.Equal(t, Bailian, tr.Format)
	require.Equal(t, 16, tr.BlockSize)
	require.InDeltaSlice(t, []float64{0, 1.386, 1.386}, offsets(tr), 1e-9, "seconds, rebased to the first row")
	require.Equal(t, 1, tr.Turns)
	r, _ := tr.Reuse()
	require.InDelta(t, 32.0/256.0, r, 1e-12, "turn 2 reuses the first two whole blocks of turn 1")
}

func TestBurstGPTSkipsFailures(t *testing.T) {
	tr := readFile(t, "burstgpt.csv", Options{})
	require.Equal(t, BurstGPT, tr.Format)
	require.False(t, tr.HasPrefixes())
	require.Equal(t, []float64{0, 113, 113}, offsets(tr))
	require.Equal(t, []int32{472, 417, 1360}, inputs(tr))
	require.Equal(t, 1, tr.Skipped, "0 response tokens is a failed request")
	_, ok := tr.Reuse()
	require.False(t, ok)

	kept := readFile(t, "burstgpt.csv", Options{KeepFailed: true})
	require.Equal(t, 4, kept.Rows())
	require.Equal(t, int32(0), kept.Row(1).Output)

	s := readFile(t, "burstgpt_sessions.csv", Options{})
	require.Equal(t, []float64{0, 3.25}, offsets(s), "the newer columns (Session ID, Elapsed time) do not move the others")
	require.Equal(t, []int32{220, 128}, inputs(s))
}

func TestAzureAbsoluteTimes(t *testing.T) {
	tr := readFile(t, "azure.csv", Options{})
	require.Equal(t, Azure, tr.Format)
	require.InDeltaSlice(t, []float64{0, 4.314579, 4.566295, 13.31941}, offsets(tr), 1e-6)
	require.Equal(t, []int32{374, 396, 879, 91}, inputs(tr))
	require.Equal(t, []int32{44, 109, 55, 16}, outputs(tr))
	require.InDelta(t, 3/13.31941, tr.MeanRate(), 1e-6)
}

func TestWindowAndMaxRows(t *testing.T) {
	tr := readFile(t, "azure.csv", Options{Start: 4, Duration: 5})
	require.InDeltaSlice(t, []float64{0, 0.251716}, offsets(tr), 1e-6, "rebased to the window's first row")
	require.Equal(t, 2, tr.Outside)
	tr = readFile(t, "mooncake.jsonl", Options{MaxRows: 2})
	require.Equal(t, 2, tr.Rows())
	_, err := Read(strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6,1,1\n"), "a.csv",
		Options{Start: 10})
	require.ErrorContains(t, err, "no rows")
}

func TestBadTraces(t *testing.T) {
	for _, c := range []struct {
		name, in, format string
		line             int
		want             string
	}{
		{"unsorted", `{"timestamp": 10, "input_length": 1, "output_length": 1, "hash_ids": [1]}
{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [2]}`, "", 2, "sorted"},
		{"negative", `{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "", 1, "negative"},
		{"too far", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}
{"timestamp": 1e16, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "", 2, "100 years"},
		{"missing column", `{"timestamp": 1, "output_length": 1, "hash_ids": [1]}`, "", 1, `missing "input_length"`},
		{"hash ids vs length", `{"timestamp": 1, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]}`, "", 1,
			"2 hash_ids for input_length 1025: blocks of 512 tokens make 3"},
		{"unreadable", "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n{\"timestamp\": 2, ", "", 2, "unreadable"},
		{"bad hash id", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [-3]}`, "", 1, "hash id"},
		{"hash id too large", `{"timestamp": 1, "input_length": 1025, "output_length": 1, "hash_ids": [1, 4294967296, 2]}`, "", 1,
			"hash id 4294967296 is not"},
		{"fractional hash id", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1.5]}`, "", 1, "hash id 1.5 is not"},
		{"hash id text", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": ["a"]}`, "", 1, `hash id "a" is not`},
		{"hash ids not a list", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": 7}`, "", 1, "hash id 7 is not"},
		{"null hash ids", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": null}`, "", 1, `missing "hash_ids"`},
		{"no hash ids", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": []}`, "", 1, "0 hash_ids for input_length 1"},
		{"bailian without chat_id", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, Bailian, 1, "chat_id"},
		{"csv column", "Timestamp,Model,Request tokens,Total tokens\n1,a,2,3\n", BurstGPT, 1, `missing column "Response tokens"`},
		{"csv unsorted", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n3,a,2,1,3,x\n1,a,2,0,2,x\n", "", 3, "sorted"},
		{"csv number", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6,x,1\n", "", 2, "whole token counts"},
		{"azure time", "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,1,1\n", "", 2, "TIMESTAMP"},
		{"not a trace", "hello\n", "", 1, "not a trace format"},
		{"unknown format", "{}", "weka", 0, "unknown format"},
		{"empty", "", "", 0, "empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readString(c.in, Options{Format: c.format})
			require.Error(t, err)
			var te *Error
			require.True(t, errors.As(err, &te), "a trace.Error: %v", err)
			require.Equal(t, "t.txt", te.File)
			require.Equal(t, c.line, te.Line, err.Error())
			require.Contains(t, err.Error(), c.want)
		})
	}
	tr, err := readString(`{"timestamp": 1, "input_length": 1100, "output_length": 1, "hash_ids": [ 4294967295 ,3.0,3e2 ]}`, Options{})
	require.NoError(t, err, "whole numbers in any JSON form, as when they were read as floats")
	require.Equal(t, []uint32{4294967295, 3, 300}, tr.HashIDs(0))
	_, err = readString("{}", Options{Start: -1})
	require.ErrorContains(t, err, "negative")
	_, err = Read(strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n"), "a.csv", Options{BlockSize: 16})
	require.ErrorContains(t, err, "no prefix identity")
}

func TestPromptsAreExactAndShareTheTracesPrefixes(t *testing.T) {
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	tr := readFile(t, "mooncake.jsonl", Options{})
	p, err := NewPrompts(tr, tk, 1)
	require.NoError(t, err)
	prompts := make([]string, tr.Rows())
	for i := range prompts {
		prompts[i] = p.Prompt(i, uint64(i))
		require.Equal(t, int(tr.Row(i).Input), tk.Count(prompts[i]), "row %d: exactly input_length tokens", i)
	}
	tokens := func(s string) []uint { return tk.Encode(s) }
	shared := func(a, b string) int {
		x, y := tokens(a), tokens(b)
		n := 0
		for n < len(x) && n < len(y) && x[n] == y[n] {
			n++
		}
		return n
	}
	require.Equal(t, 512, shared(prompts[0], prompts[1]), "rows 1 and 2 share block 0 and no more")
	require.Equal(t, 1024, shared(prompts[0], prompts[3]), "rows 1 and 4 share blocks 0 and 1")
	require.Less(t, shared(prompts[0], prompts[2]), 8, "no shared id, no shared text")
	require.Equal(t, prompts[3], p.Prompt(3, 99), "deterministic")
	other, err := NewPrompts(tr, tk, 2)
	require.NoError(t, err)
	require.NotEqual(t, prompts[0], other.Prompt(0, 0), "seeded")

	csv := readFile(t, "azure.csv", Options{})
	pc, err := NewPrompts(csv, tk, 1)
	require.NoError(t, err)
	a, b := pc.Prompt(0, 0), pc.Prompt(0, 4)
	require.Equal(t, 374, tk.Count(a))
	require.NotEqual(t, a, b, "without prefix identity every credit's prompt is unique")
}

// A byte-order mark (as Windows tools write UTF-8) starts a JSON-lines trace
// as well as a CSV one: both are read, named or detected.
func TestAByteOrderMarkIsRead(t *testing.T) {
	const bom = "\ufeff"
	for name, in := range map[string]string{
		Mooncake: `{"timestamp": 1000, "input_length": 1, "output_length": 2, "hash_ids": [1]}` + "\n",
		Bailian:  `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 1, "output_length": 2, "hash_ids": [1], "turn": 1}` + "\n",
		BurstGPT: "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,a,1,2,3,Conversation log\n",
		Azure:    "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6,1,2\n",
	} {
		for _, format := range []string{"", name} {
			tr, err := readString(bom+in, Options{Format: format})
			require.NoError(t, err, "%s (format %q)", name, format)
			require.Equal(t, name, tr.Format)
			require.Equal(t, []int32{2}, outputs(tr), name)
		}
	}
}
