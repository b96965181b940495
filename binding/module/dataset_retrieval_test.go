package module

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChunksAndRerankSetsInJS(t *testing.T) {
	t.Parallel()
	vu := newDatasetVU(t, New(), map[string]string{"doc.txt": "Paragraph about batching. " + string(bytes.Repeat([]byte("Tokens and vectors and search. "), 80))},
		`const c = llm.Dataset.chunks({seed: 2, tokens: 24, count: 10, batch: {'1': 1, '4': 1}});
		const f = llm.Dataset.chunks({tokens: [16, 16], files: ['doc.txt']});
		const r = llm.Dataset.rerank({queries: 3, documents: 5, queryTokens: 8, documentTokens: 20, topN: 2});`)
	v := vu.run(`JSON.stringify({a: c.draw(0), b: c.draw(1), size: c.size(), info: c.info(), file: f.next(), q: r.next(), rsize: r.size()})`)
	var got struct {
		A, B struct {
			Inputs      []string
			Tokens      []int
			TotalTokens int
			Category    string
		}
		Size int
		Info map[string]any
		File struct {
			Inputs []string
			Tokens []int
		}
		Q struct {
			Query          string
			Documents      []string
			DocumentTokens []int
			TopN           int
			Category       string
		}
		Rsize int
	}
	require.NoError(t, json.Unmarshal([]byte(v.String()), &got))
	require.Equal(t, 10, got.Size)
	require.Len(t, got.A.Inputs, 1)
	require.Len(t, got.B.Inputs, 4, "the 1:1 mix alternates")
	require.Equal(t, "batch_4", got.B.Category)
	require.Equal(t, 4*24, got.B.TotalTokens)
	require.Equal(t, []int{16}, got.File.Tokens)
	require.Len(t, got.Q.Documents, 5)
	require.Equal(t, 2, got.Q.TopN)
	require.Equal(t, "docs_5", got.Q.Category)
	require.Equal(t, 3, got.Rsize)
	require.Equal(t, map[string]any{"1": 0.5, "4": 0.5}, got.Info["batchShares"])
	msg := initError(t, nil, `llm.Dataset.chunks({batch: {'0': 1}})`)
	require.Contains(t, msg, "Dataset.chunks: batch: size \"0\"")
	msg = initError(t, nil, `llm.Dataset.rerank({documents: 'many'})`)
	require.Contains(t, msg, "Dataset.rerank options: documents")
	msg = initError(t, nil, `llm.Dataset.chunks({files: ['missing.txt']})`)
	require.Contains(t, msg, "missing.txt")
}

// A dataset's images reach the request in the client's protocol, from a
// folder read through k6's file system.
func TestDatasetImagesGoIntoTheChatBody(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies []map[string]any
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("ok", ""), chunk("", "stop"), usageChunk(3, 1, 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	var pic bytes.Buffer
	require.NoError(t, png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 3))))
	vu := newDatasetVU(t, New(), map[string]string{"pics/a.png": pic.String(), "pics/notes.txt": "not an image"}, fmt.Sprintf(`
		const client = new llm.Client({baseURL: %q, model: 'm'});
		const d = llm.Dataset.synthetic({seed: 1, variants: 2, mix: {short: 1}, images: {dir: 'pics'}});
		const s = llm.Dataset.synthetic({seed: 1, variants: 2, mix: {short: 1}, images: {width: 16, height: 8, format: 'png'}});`, srv.URL))
	vu.run(`globalThis.out = undefined; (async () => {
		const p = d.next();
		await client.chat({messages: p.messages, max_tokens: 4}, {item: p});
		const q = s.next();
		await client.chat({messages: q.messages, max_tokens: 4}, {item: q});
		globalThis.out = JSON.stringify([p.images.map(i => [i.mime, i.width, i.height, i.file]), q.images.map(i => [i.mime, i.width, i.height])]) })()`)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 2)
	for _, b := range bodies {
		msgs := b["messages"].([]any)                                    //nolint:forcetypeassert
		content := msgs[len(msgs)-1].(map[string]any)["content"].([]any) //nolint:forcetypeassert
		require.Len(t, content, 2, "the text and one image")
		url := content[1].(map[string]any)["image_url"].(map[string]any)["url"].(string) //nolint:forcetypeassert
		require.Regexp(t, `^data:image/png;base64,iVBOR`, url)
	}
	require.Equal(t, `[[["image/png",4,3,"pics/a.png"]],[["image/png",16,8]]]`, vu.rt.VU.Runtime().Get("out").String())
}
