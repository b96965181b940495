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
