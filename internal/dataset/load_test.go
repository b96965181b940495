package dataset

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

func loadFile(t *testing.T, name string, o LoadOptions) (*Dataset, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "datasets", name))
	if err != nil {
		t.Fatal(err)
	}
	return Load(data, name, o)
}

func items(d *Dataset) []Item {
	out := make([]Item, d.Size())
	for i := range out {
		out[i], _ = d.At(i)
	}
	return out
}

func TestLoadJSONL(t *testing.T) {
	d, err := loadFile(t, "prompts.jsonl", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := tokenizer.Get("")
	byLine := map[string]Item{}
	for _, it := range items(d) {
		byLine[it.ID] = it
		if got := countMessages(t, tk, it); got != it.PromptTokens {
			t.Errorf("%s: promptTokens %d, recount %d", it.ID, it.PromptTokens, got)
		}
	}
	want := map[string]struct {
		cat       string
		maxTokens int
		messages  int
	}{
		"prompts.jsonl:1": {"short", 64, 2},         // chat messages, max_tokens
		"prompts.jsonl:2": {"short", 128, 1},        // bare prompt: bucket default
		"prompts.jsonl:3": {"short", 200, 1},        // batch line
		"prompts.jsonl:5": {"short", 128, 1},        // content parts (line 4 is blank)
		"prompts.jsonl:6": {"long_context", 256, 1}, // long document
		"prompts.jsonl:7": {"long_output", 1800, 1}, // asks for a long answer
		"prompts.jsonl:8": {"translation", 256, 1},  // category from the record
	}
	if len(byLine) != len(want) {
		t.Fatalf("items %v", keys(byLine))
	}
	for id, w := range want {
		it, ok := byLine[id]
		if !ok {
			t.Fatalf("no item %s (have %v)", id, keys(byLine))
		}
		if it.Category != w.cat || it.MaxTokens != w.maxTokens || len(it.Messages) != w.messages {
			t.Errorf("%s: category %s maxTokens %d messages %d, want %+v", id, it.Category, it.MaxTokens, len(it.Messages), w)
		}
	}
	if p := byLine["prompts.jsonl:5"].Prompt(); p != "Describe this plan:\nmigrate the billing database next week." {
		t.Errorf("content parts joined as %q", p)
	}
	// Default mix: in proportion to the items of each category.
	if got := d.Info().Categories; len(got) != 4 {
		t.Fatalf("categories %+v", got)
	}
}

func keys(m map[string]Item) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestLoadShareGPT(t *testing.T) {
	d, err := loadFile(t, "sharegpt.json", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	its := items(d)
	if len(its) != 3 { // conversation 3 has no user turn
		t.Fatalf("%d items, want 3: %+v", len(its), its)
	}
	tk, _ := tokenizer.Get("")
	for _, it := range its {
		if it.Turn != 1 || it.Messages[len(it.Messages)-1].Role != "user" {
			t.Errorf("%s: turn %d, messages %+v", it.ID, it.Turn, it.Messages)
		}
	}
	// The reference reply's length becomes max_tokens; conv-2's is long.
	kyoto := its[1]
	if kyoto.Conversation != "conv-2" || kyoto.Messages[0].Role != "system" || kyoto.Category != "long_output" {
		t.Errorf("conv-2 item: %+v", kyoto)
	}
	if kyoto.MaxTokens < 1000 {
		t.Errorf("conv-2 maxTokens %d, want the reply's length", kyoto.MaxTokens)
	}
	if its[0].MaxTokens != tk.Count("Use slicing: my_list[::-1], or call my_list.reverse() to reverse it in place.") {
		t.Errorf("conv-1 maxTokens %d", its[0].MaxTokens)
	}

	all, err := loadFile(t, "sharegpt.json", LoadOptions{Turns: "all"})
	if err != nil {
		t.Fatal(err)
	}
	its = items(all)
	if len(its) != 4 || its[1].Turn != 2 || len(its[1].Messages) != 3 || its[1].Prompt() != "And a string?" {
		t.Fatalf("all turns: %+v", its)
	}
	if its[1].PromptTokens <= its[0].PromptTokens {
		t.Errorf("turn 2 (%d tokens) does not carry turn 1's history (%d)", its[1].PromptTokens, its[0].PromptTokens)
	}
}

func TestLoadShareGPTAsLines(t *testing.T) {
	data := `{"id": "x", "conversations": [{"from": "human", "value": "hi there"}]}` + "\n" +
		`{"id": "y", "messages": [{"role": "user", "content": "hello"}]}` + "\n"
	d, err := Load([]byte(data), "dump.jsonl", LoadOptions{Format: FormatShareGPT})
	if err != nil {
		t.Fatal(err)
	}
	if d.Size() != 2 {
		t.Fatalf("%d items", d.Size())
	}
}

func TestLoadText(t *testing.T) {
	d, err := loadFile(t, "prompts.txt", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	its := items(d)
	if len(its) != 3 || its[1].Prompt() != "How do I measure time to first token?" || its[1].ID != "prompts.txt:3" {
		t.Fatalf("items %+v", its)
	}
}

func TestLoadFiltersAndBuckets(t *testing.T) {
	d, err := loadFile(t, "prompts.jsonl", LoadOptions{MaxPromptTokens: 100,
		Buckets: []Bucket{{Name: "tiny", Prompt: Range{0, 12}}, {Name: "small", Prompt: Range{13, 0}, MaxTokens: 99}}})
	if err != nil {
		t.Fatal(err)
	}
	info := d.Info()
	if info.Skipped["prompt tokens outside limits"] != 1 {
		t.Errorf("skipped %v, want the long document", info.Skipped)
	}
	for _, it := range items(d) {
		switch {
		case it.Category == "translation":
		case it.PromptTokens <= 12 && it.Category != "tiny", it.PromptTokens > 12 && it.Category != "small":
			t.Errorf("%s (%d tokens) in %s", it.ID, it.PromptTokens, it.Category)
		}
	}
	if _, err := loadFile(t, "prompts.jsonl", LoadOptions{Mix: map[string]float64{"huge": 1}}); err == nil ||
		!strings.Contains(err.Error(), "huge") {
		t.Errorf("mix on an empty category: %v", err)
	}
}

func TestLoadScrub(t *testing.T) {
	d, err := loadFile(t, "pii.jsonl", LoadOptions{Scrub: true})
	if err != nil {
		t.Fatal(err)
	}
	got := d.Info().Scrubbed
	want := map[string]int{ScrubEmail: 2, ScrubCard: 1, ScrubPhone: 2, ScrubKey: 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: masked %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	tk, _ := tokenizer.Get("")
	for _, it := range items(d) {
		p := it.Prompt()
		for _, leak := range []string{"jane.doe", "4111 1111", "7946", "sk-proj", "ops@", "555-0143"} {
			if strings.Contains(p, leak) {
				t.Errorf("%s still contains %q: %s", it.ID, leak, p)
			}
		}
		if tk.Count(p) != it.PromptTokens {
			t.Errorf("%s counted before scrubbing", it.ID)
		}
	}
	// Look-alikes survive.
	all := items(d)[1].Prompt() + items(d)[2].Prompt()
	for _, keep := range []string{"4111111111111112", "2024-01-15", "192.168.100.200", "10.0.19045"} {
		if !strings.Contains(all, keep) {
			t.Errorf("look-alike %q was masked", keep)
		}
	}
	raw, _ := loadFile(t, "pii.jsonl", LoadOptions{})
	if len(raw.Info().Scrubbed) != 0 || !strings.Contains(items(raw)[0].Prompt(), "jane.doe") {
		t.Error("scrubbing ran without scrub: true")
	}
}

func TestLoadMalformedNamesFileAndLine(t *testing.T) {
	cases := map[string]string{
		"malformed.jsonl":           `malformed.jsonl:3: invalid JSON`,
		"bad-role.jsonl":            `bad-role.jsonl:2: messages\[0\]: role "customer"`,
		"no-prompt.jsonl":           `no-prompt.jsonl:3: no "messages" or "prompt"`,
		"malformed-sharegpt.json":   `malformed-sharegpt.json:3: conversation 1: invalid JSON`,
		"bad-speaker-sharegpt.json": `bad-speaker-sharegpt.json:4: conversation 1: turn 0: unknown speaker "robot"`,
	}
	for file, want := range cases {
		_, err := loadFile(t, file, LoadOptions{})
		if err == nil || !regexp.MustCompile(want).MatchString(err.Error()) {
			t.Errorf("%s: error %v, want %s", file, err, want)
		}
	}
	for name, data := range map[string]string{
		"obj.json":   `{"conversations": "nope"}`,
		"empty.json": ``,
		"num.json":   `42`,
		"trunc.json": "[\n{\"conversations\": []}\n",
		"neg.jsonl":  `{"prompt": "x", "max_tokens": -1}`,
		"cat.jsonl":  `{"prompt": "x", "category": "has space"}`,
	} {
		if _, err := Load([]byte(data), name, LoadOptions{}); err == nil || !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("%s: error %v, want one naming the file and line", name, err)
		}
	}
}

func TestLoadRejectsBadOptions(t *testing.T) {
	data := []byte("hello\n")
	for i, o := range []LoadOptions{
		{Format: "csv"}, {Turns: "some"}, {Tokenizer: "x"},
		{Buckets: []Bucket{{Name: "a"}, {Name: "a"}}}, {Buckets: []Bucket{{Name: "b", Prompt: Range{5, 2}}}},
	} {
		if _, err := Load(data, "p.txt", o); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}
