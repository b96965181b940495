package sim

import (
	"fmt"
	"net/http"
)

// A model's context window (max_context_tokens, 0 = none): a request whose
// prompt and asked-for answer do not fit is refused with a 400, as vLLM
// refuses one over max_model_len. A conversation whose history outgrows the
// model meets this on some turn.

// contextError is the refusal of a request over the window, nil when it fits.
func (m *model) contextError(promptTokens, maxTokens int) *apiError {
	limit := m.p.MaxContextTokens
	if limit <= 0 || promptTokens+maxTokens <= limit {
		return nil
	}
	return &apiError{
		Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded",
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens "+
			"(%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			limit, promptTokens+maxTokens, promptTokens, maxTokens),
	}
}
