package fingerprint

import (
	"fmt"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/redact"
)

// setMark stands for a credential header's value: that it is set is part of
// the test (a call without it is answered 401), its value is not.
const setMark = "(set)"

// ClientDigest is the digest of a Client's options with what is no part of
// the test left out: the API key and every credential header's value (two
// instances may spread the load over two accounts), the URL's password and
// query values, and the tags (they label the samples, they change nothing
// sent). fallback is the label of its fallback Client ("" for none), which
// has its own entry.
func ClientDigest(c *config.Client, fallback string) (string, error) {
	v := *c
	v.APIKey, v.Tags, v.Fallback = "", nil, nil
	v.BaseURL = redact.CleanURL(c.BaseURL)
	v.Headers = withoutCredentials(c.Headers)
	protocol := ""
	if c.Protocol != nil {
		protocol = c.Protocol.Name // the rest of the spec is code, the same for one name
	}
	v.Protocol = nil
	if c.ServerMetrics != nil {
		v.ServerMetrics = make(config.ServerMetricsList, len(c.ServerMetrics))
		for i, sm := range c.ServerMetrics {
			sm.URL = redact.CleanURL(sm.URL)
			sm.Headers = withoutCredentials(sm.Headers)
			v.ServerMetrics[i] = sm
		}
	}
	d, err := digestJSON(struct {
		Options  config.Client
		Protocol string
		Fallback string
	}{v, protocol, fallback})
	if err != nil {
		return "", fmt.Errorf("fingerprint: client %s: %w", c.Name, err)
	}
	return d, nil
}

func withoutCredentials(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if redact.IsCredentialHeader(k) {
			v = setMark
		}
		out[k] = v
	}
	return out
}
