package stream

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Framing fuzzers: arbitrary bodies through the real reader (our SSE framer or the
// NDJSON scanner, then the protocol's decoder), read whole and in small pieces.
// Whatever the bytes, Finish returns a result that is consistent with itself,
// and the way the bytes were cut into reads changes nothing but the clock.

func FuzzSSEFraming(f *testing.F) {
	specs := framedBy(protocol.FramingSSE)
	seedFraming(f, specs)
	f.Fuzz(func(t *testing.T, body []byte, pick, piece uint8) {
		checkFraming(t, specs[int(pick)%len(specs)], body, piece)
	})
}

// FuzzSSEFramer holds our SSE framer to go-sse's on arbitrary bodies, reads
// and limits: the same events and the same end (clean, too large, read error).
func FuzzSSEFramer(f *testing.F) {
	specs := framedBy(protocol.FramingSSE)
	seedFraming(f, specs)
	f.Fuzz(func(t *testing.T, body []byte, limit, piece uint8) {
		// limit: maxEventSize from 1 KiB (the seeds' small values: their events
		// fit) down to 4 bytes, so bodies also hit it; piece: the read size, and
		// how the body ends (EOF, a read error after the last bytes or with them).
		checkAgainstGoSSE(t, body, int(piece%16)+1, 1024-4*int(limit), bodyEnd(piece/16%3))
	})
}

func FuzzNDJSONFraming(f *testing.F) {
	specs := framedBy(protocol.FramingNDJSON)
	seedFraming(f, specs)
	f.Fuzz(func(t *testing.T, body []byte, pick, piece uint8) {
		checkFraming(t, specs[int(pick)%len(specs)], body, piece)
	})
}

// framedBy lists the protocols with this framing.
func framedBy(framing protocol.Framing) []*protocol.Spec {
	var specs []*protocol.Spec
	for _, name := range protocol.Names() {
		if s, _ := protocol.Lookup(name); s.Framing == framing {
			specs = append(specs, s)
		}
	}
	return specs
}

// seedFraming adds every fixture of the given protocols, with its protocol's
// index, cut in three different piece sizes.
func seedFraming(f *testing.F, specs []*protocol.Spec) {
	if len(specs) == 0 {
		f.Fatal("no protocol with this framing")
	}
	for i, s := range specs {
		paths, _ := filepath.Glob(filepath.Join(fixturesDir, s.Name, "*.txt"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			for _, piece := range []uint8{0, 2, 7} {
				f.Add(b, uint8(i), piece)
			}
		}
	}
}

// pieceReader returns at most n bytes per Read.
type pieceReader struct {
	r io.Reader
	n int
}

func (p *pieceReader) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.n)]) }

func readAll(spec *protocol.Spec, r io.Reader) *Result {
	c := NewCall(Config{Spec: spec, MaxEventSize: 1 << 16, CountTokens: wordCount}, time.Now())
	if err := c.Consume(r); err != nil {
		c.Fail(Classify(err, nil), err.Error())
	}
	return c.Finish()
}

func checkFraming(t *testing.T, spec *protocol.Spec, body []byte, piece uint8) {
	whole := readAll(spec, bytes.NewReader(body))
	cut := readAll(spec, &pieceReader{r: bytes.NewReader(body), n: int(piece%16) + 1})
	for _, r := range []*Result{whole, cut} {
		if r == nil {
			t.Fatal("Finish returned no result")
		}
		if r.OK != (r.Err == nil) {
			t.Fatalf("OK=%v with error %v", r.OK, r.Err)
		}
		if r.Chunks < 0 || r.OutputTokens < 0 {
			t.Fatalf("negative figures: chunks %d, output tokens %d", r.Chunks, r.OutputTokens)
		}
		if r.OK && r.Chunks > 0 && !r.TTFT.Known() {
			t.Fatal("output arrived but no TTFT")
		}
	}
	if whole.Text != cut.Text || whole.Reasoning != cut.Reasoning || whole.Chunks != cut.Chunks ||
		whole.FinishReason != cut.FinishReason || whole.OK != cut.OK || whole.OutputTokens != cut.OutputTokens ||
		whole.TokenSource != cut.TokenSource || whole.Model != cut.Model || !reflect.DeepEqual(whole.ToolCalls, cut.ToolCalls) {
		t.Fatalf("the read size changed the result:\nwhole %+v\ncut   %+v", summary(whole), summary(cut))
	}
	if !whole.OK && whole.Err.Type != cut.Err.Type {
		t.Fatalf("the read size changed the error: %v vs %v", whole.Err, cut.Err)
	}
}

func summary(r *Result) map[string]any {
	return map[string]any{
		"ok": r.OK, "err": r.Err, "text": r.Text, "reasoning": r.Reasoning, "chunks": r.Chunks,
		"finish": r.FinishReason, "tokens": r.OutputTokens, "source": r.TokenSource, "tools": r.ToolCalls, "model": r.Model,
	}
}
