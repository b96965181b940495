package module

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An option whose 0 means nothing (no rows, no items, no images) taken as
// "the default" when given as 0 hides a mistake: every such option refuses
// an explicit 0, naming itself, and says what leaving it out does.
func TestExplicitZeroIsRefusedNamingTheOption(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"t.jsonl": `{"timestamp": 0, "input_length": 20, "output_length": 10, "hash_ids": [0]}
{"timestamp": 200, "input_length": 20, "output_length": 30, "hash_ids": [0]}
`,
		"p.jsonl": `{"prompt": "hello there"}
{"prompt": "and again"}
`,
	}
	for code, want := range map[string]string{
		`llm.Schedule.trace('t.jsonl', {maxRows: 0})`:                                 "maxRows must be a whole number above 0 (leave it out for every row)",
		`llm.Schedule.trace('t.jsonl', {duration: 0})`:                                "duration must be a number of seconds above 0 (leave it out to replay to the end)",
		`llm.Schedule.trace('t.jsonl', {blockSize: 0})`:                               "blockSize must be a whole number of tokens above 0",
		`llm.Schedule.trace('t.jsonl', {rateScale: 0})`:                               "rateScale must be a number above 0",
		`llm.Schedule.gamma({rate: 2, duration: '10s', cv: 0})`:                       "cv must be a number above 0",
		`llm.Arrivals.bursty({rate: 2, cv: 0})`:                                       "cv must be a number in (0, 30]",
		`llm.Dataset.load('p.jsonl', {limit: 0})`:                                     "limit must be a whole number above 0 (leave it out for every item)",
		`llm.Dataset.synthetic({variants: 0})`:                                        "variants must be a whole number of items above 0",
		`llm.Dataset.synthetic({categories: {short: {variants: 0}}})`:                 "categories.short.variants must be",
		`llm.Dataset.synthetic({sharedPrefix: {count: 0, tokens: 100}})`:              "sharedPrefix.count must be",
		`llm.Dataset.synthetic({sharedPrefix: {count: 2, tokens: 100, fraction: 0}})`: "sharedPrefix.fraction must be a number in (0, 1]",
		`llm.Dataset.synthetic({images: {count: 0}})`:                                 "images.count must be a whole number of images above 0",
		`llm.Dataset.synthetic({images: {quality: 0}})`:                               "images.quality must be a JPEG quality from 1 to 100",
		`llm.Dataset.synthetic({images: {fraction: 0}})`:                              "images.fraction must be a number in (0, 1]",
		`llm.Dataset.chunks({count: 0})`:                                              "count must be a whole number of chunks above 0",
		`llm.Dataset.rerank({queries: 0})`:                                            "queries must be a whole number of queries above 0",
		`llm.Dataset.rerank({topN: 0})`:                                               "topN must be a whole number above 0 (leave it out for every score)",
		`new llm.Client({baseURL: 'http://x', timeouts: {idle: -1}})`:                 "timeouts.idle must be a duration like '3s' or a number of milliseconds (not negative)",
		`new llm.Client({baseURL: 'http://x', timeouts: {connect: '-1s'}})`:           "timeouts.connect must be a duration like '3s'",
		`new llm.Client({baseURL: 'http://x', timeouts: {total: 0}})`:                 "timeouts.total must be greater than 0",
	} {
		require.ErrorContains(t, initErr(t, files, code), want, code)
	}
	// a timeout of 0 other than total is meaningful: that phase's limit off
	vu := newDatasetVU(t, New(), nil, `const c = new llm.Client({baseURL: 'http://x', timeouts: {connect: 0, firstToken: 0, idle: 0}});`)
	require.NotNil(t, vu)
}

// initErr runs init code that must fail and returns its error.
func initErr(t *testing.T, files map[string]string, code string) error {
	t.Helper()
	return errorOf(initError(t, files, code))
}

type errorOf string

func (e errorOf) Error() string { return string(e) }

// The same for the calls' own options.
func TestCallOptionsRefuseAnExplicitZero(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});`)
	for code, want := range map[string]string{
		`client.embed({input: 'x', dimensions: 0})`:              "dimensions must be a whole number above 0 (leave it out for the model's)",
		`client.rerank({query: 'q', documents: ['d'], topN: 0})`: "topN must be a whole number above 0 (leave it out for every score)",
	} {
		_, err := vu.rt.RunOnEventLoop(code)
		require.ErrorContains(t, err, want, code)
	}
}
