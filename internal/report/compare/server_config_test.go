package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

func TestServerConfigDifferences(t *testing.T) {
	t.Parallel()
	cur := []servermetrics.View{{Endpoint: "http://v/metrics", Config: map[string]string{"block_size": "32", "enable_prefix_caching": "True"}}}
	base := []servermetrics.View{{Endpoint: "http://v/metrics", Config: map[string]string{"block_size": "16", "enable_prefix_caching": "True", "num_gpu_blocks": "27000"}}}
	assert.Equal(t, []string{"server http://v/metrics configuration: block_size 32 (baseline 16), num_gpu_blocks unknown (baseline 27000)"},
		ServerConfigDifferences(cur, base))
	assert.Empty(t, ServerConfigDifferences(base, base), "the same set-up")
}

func TestServerModelDifferences(t *testing.T) {
	t.Parallel()
	n8, n32 := int64(8192), int64(32768)
	const ep = "http://v/metrics"
	cur := []servermetrics.View{{Endpoint: ep, Models: []servermetrics.ServedModel{{ID: "llama", MaxModelLen: &n32}, {ID: "new-lora"}}}}
	base := []servermetrics.View{{Endpoint: ep, Models: []servermetrics.ServedModel{{ID: "llama", MaxModelLen: &n8}, {ID: "old-lora"}}}}
	assert.Equal(t, []string{"server http://v/metrics models: llama context 32768 (baseline 8192), new-lora served (baseline not), old-lora not served (baseline served it)"},
		ServerModelDifferences(cur, base))
	assert.Empty(t, ServerModelDifferences(cur, cur), "the same models")
	unread := []servermetrics.View{{Endpoint: ep}}
	assert.Equal(t, []string{"server http://v/metrics models: unknown (baseline llama (context 8192 tokens), old-lora (context unknown))"},
		ServerModelDifferences(unread, base), "a list one run did not read is unknown there")
	assert.Empty(t, ServerModelDifferences(unread, unread))
	other := []servermetrics.View{{Endpoint: "http://w/metrics", Models: base[0].Models}}
	assert.Empty(t, ServerModelDifferences(cur, other), "another endpoint is no baseline of this one")
}
