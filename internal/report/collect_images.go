package report

import (
	"sort"
	"sync"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// TTFT split by the pictures in the prompt. Image tokens cost prefill, so a
// run that mixes prompts with and without images (or of several sizes) has
// TTFTs that differ for that reason alone; the split shows by how much,
// next to the prompts without images of the same run.

// ImageCollector gathers the answered chat calls' TTFT by the prompt's
// image count and total size.
type ImageCollector struct {
	mu        sync.Mutex
	exclude   *excluder
	groups    map[imageKey]*ImageGroup
	anyImages bool
}

type imageKey struct{ Count, Size int }

// ImageGroup is the calls with one image count and one size class.
type ImageGroup struct {
	// Images is the count of pictures (5 stands for five or more).
	Images int
	// Size names the total pixels of the prompt's pictures.
	Size  string
	Calls uint64
	TTFT  *sketch.Sketch
	// Bytes is the pictures' encoded bytes, summed.
	Bytes int64
}

// imageSizes are the classes of a prompt's total pixels, upper bounds in
// megapixels: a 512×512 image is 0.26 MP, 720p 0.92 MP, 1080p 2.1 MP.
var imageSizes = []struct { //nolint:gochecknoglobals // read-only table
	name string
	mp   float64
}{{"≤0.3 MP", 0.3}, {"≤1 MP", 1}, {"≤4 MP", 4}, {">4 MP", 0}}

func imageSize(pixels int64) int {
	mp := float64(pixels) / 1e6
	for i, s := range imageSizes[:len(imageSizes)-1] {
		if mp <= s.mp {
			return i
		}
	}
	return len(imageSizes) - 1
}

// NewImageCollector makes an empty collector leaving out what opt says.
func NewImageCollector(opt Options) *ImageCollector {
	return &ImageCollector{exclude: newExcluder(opt.Exclude), groups: map[imageKey]*ImageGroup{}}
}

// Add records a chat call with a TTFT (a failed call's too, as the TTFT row
// counts it); others are ignored.
func (c *ImageCollector) Add(o *Observation) {
	if o == nil || o.Retrieval != nil {
		return
	}
	v, ok := rowTTFT.Kept(o)
	if !ok {
		return
	}
	key := imageKey{Count: min(o.Images, 5), Size: -1}
	if o.Images > 0 {
		key.Size = imageSize(o.ImagePixels)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exclude.leaveOut(o) {
		return
	}
	g := c.groups[key]
	if g == nil {
		g = &ImageGroup{Images: key.Count, TTFT: sketch.New(sketch.FineAlpha)}
		if key.Size >= 0 {
			g.Size = imageSizes[key.Size].name
		}
		c.groups[key] = g
	}
	c.anyImages = c.anyImages || o.Images > 0
	g.Calls++
	g.Bytes += o.ImageBytes
	g.TTFT.Add(v)
}

// Groups is every group, by count then size; none when no prompt had images.
func (c *ImageCollector) Groups() []*ImageGroup {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.anyImages {
		return nil
	}
	keys := make([]imageKey, 0, len(c.groups))
	for k := range c.groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Count != keys[j].Count {
			return keys[i].Count < keys[j].Count
		}
		return keys[i].Size < keys[j].Size
	})
	out := make([]*ImageGroup, len(keys))
	for i, k := range keys {
		cp := *c.groups[k]
		out[i] = &cp
	}
	return out
}
