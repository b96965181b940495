package servermetrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The models a serving engine serves, from its OpenAI-compatible
// GET /v1/models: vLLM (and SGLang) add max_model_len to each entry, the
// context length a request may fill; OpenAI's own shape has no such field,
// and then the length is unknown, never 0. The list is read once, after the
// first scrape that shows a serving engine: it is the set-up the figures
// were measured on, beside the cache configuration.

// ServedModel is one entry of the server's model list.
type ServedModel struct {
	ID string `json:"id"`
	// MaxModelLen is the model's context length in tokens (vLLM's
	// max_model_len); null when the server does not say.
	MaxModelLen *int64 `json:"max_model_len"`
}

// ProblemModels: the model list could not be read (down, slow, not the
// OpenAI shape); the run goes on without it.
const ProblemModels = "models"

// ModelsOff is the serverMetrics models option that reads no model list.
const ModelsOff = "off"

// maxModelsBytes bounds the model list's body: a list of a few hundred
// adapters is tens of KiB.
const maxModelsBytes = 4 << 20

// servesModelList says whether an engine answers OpenAI's /v1/models on the
// port of its metrics (TEI and a GPU exporter do not).
func servesModelList(engine string) bool {
	switch engine {
	case EngineVLLM, EngineSGLang, EngineTGI, EngineLlamaCpp, EngineLLMSim:
		return true
	}
	return false
}

// modelsURL is where the model list is read: the option's URL, or the
// metrics URL with its /metrics path replaced by /v1/models (vLLM, SGLang,
// TGI and llama.cpp serve both on one port); nil with ModelsOff.
func modelsURL(metrics *url.URL, option string) (*url.URL, error) {
	switch option = strings.TrimSpace(option); option {
	case ModelsOff:
		return nil, nil //nolint:nilnil // off is no URL and no error
	case "":
		u := *metrics
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/metrics") + "/v1/models"
		u.RawPath, u.RawQuery, u.Fragment = "", "", ""
		return &u, nil
	}
	u, err := url.Parse(option)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("serverMetrics models: want 'off' or an http(s)://host[:port]/v1/models url")
	}
	return u, nil
}

// fetchModels GETs the model list with the scrape's headers. Its errors
// name the display URL, never a header.
func (s *Scraper) fetchModels(ctx context.Context, u *url.URL, timeout time.Duration) ([]ServedModel, error) {
	shown := displayURL(u)
	body, _, f := s.get(ctx, u, "application/json", s.maxModels)
	if f != nil {
		switch {
		case (f.stage == getConnect || f.stage == getRead) && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("the model list at %s did not come within %v", shown, timeout)
		case f.stage == getConnect:
			return nil, fmt.Errorf("the model list at %s is unreachable: %s", shown, f.cause)
		case f.stage == getRead:
			return nil, fmt.Errorf("the model list at %s: reading the body: %s", shown, f.cause)
		case f.stage == getStatus:
			return nil, fmt.Errorf("the model list at %s answered HTTP %d (set serverMetrics models to its url, or 'off')", shown, f.status)
		case f.stage == getTooLarge:
			return nil, fmt.Errorf("the model list at %s is larger than %s", shown, sizeText(s.maxModels))
		}
		return nil, fmt.Errorf("the model list at %s: %s", shown, f.cause)
	}
	models, err := parseModels(body)
	if err != nil {
		return nil, fmt.Errorf("the model list at %s: %w", shown, err)
	}
	return models, nil
}

// modelEntry is one entry of the list as sent.
type modelEntry struct {
	ID          string          `json:"id"`
	MaxModelLen json.RawMessage `json:"max_model_len"`
}

// parseModels reads OpenAI's list shape, {"object":"list","data":[{"id":…}]},
// with vLLM's max_model_len when an entry has it. A single model object
// (TGI's /v1/models before it answered a list) is a list of one.
func parseModels(body []byte) ([]ServedModel, error) {
	var list struct {
		Data *[]modelEntry `json:"data"`
		modelEntry
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("not OpenAI's model list (JSON with a data list): %w", err)
	}
	switch {
	case list.Data == nil && list.ID != "":
		list.Data = &[]modelEntry{list.modelEntry}
	case list.Data == nil:
		return nil, errors.New("not OpenAI's model list: no data list")
	}
	out := make([]ServedModel, 0, len(*list.Data))
	for _, e := range *list.Data {
		if e.ID == "" {
			return nil, errors.New("an entry of its data list has no id")
		}
		m := ServedModel{ID: e.ID}
		if raw := strings.TrimSpace(string(e.MaxModelLen)); raw != "" && raw != "null" {
			var n int64
			if err := json.Unmarshal(e.MaxModelLen, &n); err != nil || n <= 0 {
				return nil, fmt.Errorf("model %q: max_model_len %s is not a positive whole number of tokens", e.ID, raw)
			}
			m.MaxModelLen = &n
		}
		out = append(out, m)
	}
	return out, nil
}

// ModelsText writes the model list as "id (context N tokens), …", a length
// the server did not give as "context unknown".
func ModelsText(models []ServedModel) string {
	parts := make([]string, len(models))
	for i, m := range models {
		parts[i] = m.ID + " (context " + contextText(m.MaxModelLen) + ")"
	}
	return strings.Join(parts, ", ")
}

func contextText(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprintf("%d tokens", *n)
}

// The model list's read, once per endpoint.
const (
	modelsNotRead = iota
	modelsReading
	modelsDone
)

// readModelsAside reads the model list on a goroutine of its own, once a
// scrape has shown a serving engine: a slow list must not delay the
// scrapes. Stop waits for it.
func (s *Scraper) readModelsAside() {
	if !s.modelsDue() {
		return
	}
	s.modelsWG.Add(1)
	go func() {
		defer s.modelsWG.Done()
		s.readModels(s.modelsCtx, s.cfg.Timeout)
	}()
}

// endModels ends the list's read at Stop: one in flight gets QuietWait to
// finish (a healthy list comes in milliseconds; a test may end that soon
// after its baseline), then is cut; a list no scrape before had called
// for (the engine first shown by the final snapshot) is read now.
func (s *Scraper) endModels(timeout time.Duration) {
	done := make(chan struct{})
	go func() { s.modelsWG.Wait(); close(done) }()
	t := time.NewTimer(s.cfg.QuietWait)
	select {
	case <-done:
	case <-t.C:
		s.modelsCancel()
		<-done
	}
	t.Stop()
	s.readModels(s.modelsCtx, timeout)
	s.modelsCancel()
}

// modelsDue says whether the list is to be read now: an endpoint whose
// list is not read yet, and a scrape that showed an engine serving one (or
// the script gave the list's URL).
func (s *Scraper) modelsDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelsDueLocked()
}

func (s *Scraper) modelsDueLocked() bool {
	return s.modelsAt != nil && s.modelsState == modelsNotRead && s.scrapes > 0 &&
		(s.modelsGiven || servesModelList(s.engine))
}

// readModels reads the list within timeout; a failure is one warning and
// the list stays unknown. A read Stop cut short is not tried again: the
// list was already slow, and the end of the test does not wait for it.
func (s *Scraper) readModels(parent context.Context, timeout time.Duration) {
	s.mu.Lock()
	due := s.modelsDueLocked()
	if due {
		s.modelsState = modelsReading
	}
	s.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	models, err := s.fetchModels(ctx, s.modelsAt, timeout)
	if err != nil && errors.Is(parent.Err(), context.Canceled) {
		err = fmt.Errorf("the model list at %s had not come when the test ended", displayURL(s.modelsAt))
	}
	s.mu.Lock()
	s.modelsState = modelsDone
	if err == nil {
		s.models = models
	}
	s.mu.Unlock()
	if err != nil {
		s.problem(ProblemModels, "serverMetrics "+s.display+": "+err.Error()+"; the served models and their context length are unknown")
	}
}
