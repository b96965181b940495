package embed

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// RerankRequest is one rerank call: score Documents against Query.
type RerankRequest struct {
	Model     string
	Query     string
	Documents []string
	// TopN asks for the best N only (0 = every document's score).
	TopN int
	// ReturnDocuments asks the server to echo the documents' text.
	ReturnDocuments bool
	Extra           map[string]any
}

// Ranked is one document's place: its index in the request and its score.
type Ranked struct {
	Index int
	Score float64
}

// RerankAnswer is what a rerank answer said, best first.
type RerankAnswer struct {
	Results []Ranked
	// InputTokens is the server's count (query and document of every pair);
	// 0 when it reported none.
	InputTokens int64
	Model       string
	// ClientTopN says TopN was applied by the client: the API has no such
	// field, the server scored every document.
	ClientTopN bool
}

// RerankAPI is one rerank wire format.
type RerankAPI struct {
	Name    string
	Path    func(r *RerankRequest) string
	Headers func(h http.Header, apiKey string)
	Body    func(r *RerankRequest) ([]byte, error)
	Parse   func(body []byte, r *RerankRequest) (*RerankAnswer, error)
}

var rerankAPIs = map[string]*RerankAPI{} //nolint:gochecknoglobals // filled by init, read-only after

func registerRerank(a *RerankAPI) {
	if _, dup := rerankAPIs[a.Name]; dup {
		panic("embed: rerank API registered twice: " + a.Name)
	}
	rerankAPIs[a.Name] = a
}

// LookupRerank returns the rerank API named name.
func LookupRerank(name string) (*RerankAPI, error) {
	if a, ok := rerankAPIs[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown rerank API %q (known: %s)", name, strings.Join(RerankNames(), ", "))
}

// RerankNames lists the rerank APIs, sorted.
func RerankNames() []string { return sortedKeys(rerankAPIs) }

// Validate checks what every rerank API needs.
func (r *RerankRequest) Validate() error {
	switch {
	case r.Query == "":
		return errors.New("query: a non-empty string is required")
	case len(r.Documents) == 0:
		return errors.New("documents: give a non-empty array of strings")
	case r.TopN < 0:
		return fmt.Errorf("topN %d is negative", r.TopN)
	}
	return nil
}

// settle checks the results against the request and orders them best first
// (the servers do; a proxy may not), applying TopN when the client must.
func settle(a *RerankAnswer, r *RerankRequest, clientTopN bool) (*RerankAnswer, error) {
	seen := make(map[int]bool, len(a.Results))
	for _, x := range a.Results {
		if x.Index < 0 || x.Index >= len(r.Documents) {
			return nil, fmt.Errorf("result index %d is outside the %d documents sent", x.Index, len(r.Documents))
		}
		if seen[x.Index] {
			return nil, fmt.Errorf("document %d is ranked twice", x.Index)
		}
		seen[x.Index] = true
	}
	sort.SliceStable(a.Results, func(i, j int) bool { return a.Results[i].Score > a.Results[j].Score })
	if clientTopN && r.TopN > 0 && len(a.Results) > r.TopN {
		a.Results = a.Results[:r.TopN]
		a.ClientTopN = true
	}
	return a, nil
}
