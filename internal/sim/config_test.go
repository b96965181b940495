package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProfiles(t *testing.T) {
	for _, name := range []string{"demo", "fast", "slow", "small", "large"} {
		p, err := Profile(name)
		require.NoError(t, err, name)
		require.NoError(t, p.Validate(), name)
	}
	demo, _ := Profile("demo")
	assert.Equal(t, 16, demo.MaxNumSeqs)
	assert.True(t, demo.PrefixCache)
	assert.InDelta(t, 20, demo.DecodeBaseMs, 0.001)
	assert.InDelta(t, 3, 100*demo.PrefillPerTokenMs, 1, "a few ms of prefill per 100 tokens")
	fast, _ := Profile("fast")
	assert.Zero(t, fast.PrefillBaseMs+fast.PrefillPerTokenMs+fast.DecodeBaseMs+fast.DecodePerSeqMs)
	small, _ := Profile("small")
	assert.LessOrEqual(t, small.MaxNumSeqs, 4)
	large, _ := Profile("large")
	assert.Greater(t, large.DecodeBaseMs, demo.DecodeBaseMs)
	slow, _ := Profile("slow")
	assert.GreaterOrEqual(t, slow.MaxNumSeqs, 5000, "slow holds thousands of streams without queueing")
	assert.GreaterOrEqual(t, slow.DecodeBaseMs, 1000.0, "one token a second: streams stay open for minutes")
	_, err := Profile("huge")
	require.ErrorContains(t, err, "demo, fast, large, slow, small")
}

func TestKnobsDocumentEveryField(t *testing.T) {
	var keys []string
	typ := reflect.TypeFor[ModelProfile]()
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if tag != "faults" {
			keys = append(keys, tag)
		}
		y, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		assert.Equal(t, tag, y, "json and yaml keys agree")
	}
	var documented []string
	for _, k := range Knobs() {
		documented = append(documented, k.Key)
		assert.Regexp(t, `\(.+\)|\|`, k.Help, "%s says its unit", k.Key)
	}
	assert.Equal(t, keys, documented)
}

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	require.NoError(t, cfg.Validate())
	require.Len(t, cfg.Models, 1)
	assert.Equal(t, DefaultModelName, cfg.Models[0].Name)
	assert.Equal(t, "127.0.0.1:8000", cfg.Addr)
}

func TestParseConfigYAMLAndJSON(t *testing.T) {
	yml := `
addr: 127.0.0.1:9000
seed: 7
trace: /tmp/t.jsonl
models:
  - name: big
    profile: large
    decode_base_ms: 55
    faults:
      "stall=100@2": 0.5
  - name: quick
    profile: fast
  - name: plain
`
	cfg, err := ParseConfig([]byte(yml), false, DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, "127.0.0.1:9000", cfg.Addr)
	assert.Equal(t, uint64(7), cfg.Seed)
	assert.Equal(t, int64(8<<20), cfg.MaxBodyBytes, "unset keys keep their defaults")
	require.Len(t, cfg.Models, 3)
	large, _ := Profile("large")
	big := cfg.Models[0]
	assert.Equal(t, "big", big.Name)
	assert.InDelta(t, 55, big.DecodeBaseMs, 0.001)
	assert.Equal(t, large.MaxNumSeqs, big.MaxNumSeqs, "the rest comes from the profile")
	assert.Equal(t, map[string]float64{"stall=100@2": 0.5}, big.Faults)
	fast, _ := Profile("fast")
	assert.Equal(t, fast, cfg.Models[1].ModelProfile)
	demo, _ := Profile("demo")
	assert.Equal(t, demo, cfg.Models[2].ModelProfile, "profile defaults to demo")

	js := `{"seed":3,"models":[{"name":"a","profile":"small","max_num_seqs":2}]}`
	cfg, err = ParseConfig([]byte(js), true, DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.Models[0].MaxNumSeqs)
	assert.Equal(t, "127.0.0.1:8000", cfg.Addr)
	// YAML reads JSON too.
	cfg2, err := ParseConfig([]byte(js), false, DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, cfg.Models, cfg2.Models)

	// A file without models keeps the default one.
	cfg, err = ParseConfig([]byte("seed: 9\n"), false, DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig().Models, cfg.Models)

	for _, bad := range []struct {
		doc    string
		isJSON bool
	}{
		{`{"models":[{"name":"a","max_num_sqes":2}]}`, true},
		{`{"adr":"x"}`, true},
		{"models:\n  - name: a\n    decode_ms: 3\n", false},
		{"models:\n  - name: a\n    profile: nope\n", false},
		{"seed: [1", false},
	} {
		_, err := ParseConfig([]byte(bad.doc), bad.isJSON, DefaultConfig())
		assert.Error(t, err, bad.doc)
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"models":[{"name":"x","profile":"fast"}]}`), 0o600))
	cfg, err := LoadConfigFile(path, DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, "x", cfg.Models[0].Name)
	_, err = LoadConfigFile(filepath.Join(dir, "missing.yaml"), DefaultConfig())
	require.Error(t, err)
}

func TestValidate(t *testing.T) {
	base := func() Config {
		c := DefaultConfig()
		c.Models = []ModelConfig{fastModel("a")}
		return c
	}
	for name, mutate := range map[string]func(*Config){
		"no models":        func(c *Config) { c.Models = nil },
		"no name":          func(c *Config) { c.Models[0].Name = "" },
		"twice":            func(c *Config) { c.Models = append(c.Models, c.Models[0]) },
		"zero slots":       func(c *Config) { c.Models[0].MaxNumSeqs = 0 },
		"queue -2":         func(c *Config) { c.Models[0].MaxQueue = -2 },
		"negative decode":  func(c *Config) { c.Models[0].DecodeBaseMs = -1 },
		"zero tps":         func(c *Config) { c.Models[0].TokensPerStep = 0 },
		"bad dist":         func(c *Config) { c.Models[0].OutputDist = "gauss" },
		"dist needs mean":  func(c *Config) { c.Models[0].OutputDist = "uniform" },
		"zero block":       func(c *Config) { c.Models[0].CacheBlockTokens = 0 },
		"bad fault":        func(c *Config) { c.Models[0].Faults = map[string]float64{"boom": 0.1} },
		"fault prob > 1":   func(c *Config) { c.Models[0].Faults = map[string]float64{"html": 2} },
		"zero body":        func(c *Config) { c.MaxBodyBytes = 0 },
		"unknown base":     func(c *Config) { c.Models[0] = ModelConfig{Name: "a", Base: "nope"} },
		"zero max tokens":  func(c *Config) { c.Models[0].DefaultMaxTokens = 0 },
		"negative retry":   func(c *Config) { c.Models[0].RetryAfterSec = -1 },
		"negative gateway": func(c *Config) { c.Models[0].GatewayFlushMs = -1 },
	} {
		c := base()
		mutate(&c)
		assert.Error(t, c.Validate(), name)
		_, err := New(c)
		assert.Error(t, err, name)
	}
	// A model given only by its profile name is filled in.
	c := base()
	c.Models[0] = ModelConfig{Name: "a", Base: "small"}
	require.NoError(t, c.Validate())
	assert.Equal(t, 4, c.Models[0].MaxNumSeqs)
}

func TestSetKnob(t *testing.T) {
	p, _ := Profile("demo")
	require.NoError(t, p.SetKnob("decode_base_ms", "35.5"))
	require.NoError(t, p.SetKnob("max_num_seqs", "3"))
	require.NoError(t, p.SetKnob("prefix_cache", "false"))
	require.NoError(t, p.SetKnob("output_dist", "uniform"))
	assert.InDelta(t, 35.5, p.DecodeBaseMs, 0.0001)
	assert.Equal(t, 3, p.MaxNumSeqs)
	assert.False(t, p.PrefixCache)
	assert.Equal(t, "uniform", p.OutputDist)
	assert.Error(t, p.SetKnob("nope", "1"))
	assert.Error(t, p.SetKnob("max_num_seqs", "many"))
	assert.Error(t, p.SetKnob("faults", "x"))
}

func TestProfileJSONRoundTrip(t *testing.T) {
	p, _ := Profile("demo")
	p.Faults = map[string]float64{"html": 0.1}
	b, err := json.Marshal(ModelConfig{Name: "x", Base: "demo", ModelProfile: p})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"decode_base_ms":20`)
	assert.Contains(t, string(b), `"profile":"demo"`)
	var back ModelConfig
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p, back.ModelProfile)
}
