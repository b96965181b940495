package dataset

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Dataset is an immutable set of items grouped by category plus the sampling
// state shared by every VU of the process: one draw counter for the whole
// test, and one per part when the test is split across instances.
type Dataset struct {
	name      string
	tokenizer string
	items     []Item
	cats      []categoryItems
	sched     *schedule
	whole     *Part
	bust      *buster // nil unless cacheBust
	images    *imager // nil unless images
	info      Info

	mu    sync.Mutex
	parts map[string]*Part // by segment and sequence
}

type categoryItems struct {
	name   string
	weight float64
	items  []int // indices into Dataset.items, in draw order
}

// newDataset groups items by category and builds the sampling schedule from
// weights (categories absent from weights, or with weight 0, are not drawn).
func newDataset(name, tokenizerName string, items []Item, weights map[string]float64) (*Dataset, error) {
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no items", name)
	}
	byCat := map[string][]int{}
	for i := range items {
		items[i].index = i
		byCat[items[i].Category] = append(byCat[items[i].Category], i)
	}
	names := make([]string, 0, len(weights))
	for n, w := range weights {
		if w > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names) // the schedule must not depend on map order
	d := &Dataset{name: name, tokenizer: tokenizerName, items: items}
	ws := make([]float64, 0, len(names))
	for _, n := range names {
		idx := byCat[n]
		if len(idx) == 0 {
			return nil, fmt.Errorf("%s: category %q has weight %v but no items", name, n, weights[n])
		}
		d.cats = append(d.cats, categoryItems{name: n, weight: weights[n], items: idx})
		ws = append(ws, weights[n])
	}
	s, err := newSchedule(ws)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.sched = s
	d.whole = newPart(d, Share{})
	d.info = d.describe()
	return d, nil
}

// Name identifies the dataset in messages (the file, or "synthetic").
func (d *Dataset) Name() string { return d.name }

// Size is the number of distinct items.
func (d *Dataset) Size() int { return len(d.items) }

// Categories lists the categories that are drawn, sorted by name.
func (d *Dataset) Categories() []string {
	out := make([]string, len(d.cats))
	for i, c := range d.cats {
		out[i] = c.name
	}
	return out
}

// Next returns the next draw of the process-wide sequence: whichever VU calls,
// the sequence of draws keeps the mix's proportions (see schedule).
func (d *Dataset) Next() Item { return d.whole.Next() }

// Draw returns draw n of the sequence without advancing it, so a script can key
// on k6's iteration number for a run that is reproducible draw by draw. Within a
// category items come in turn (a conversation's turns in order).
func (d *Dataset) Draw(n uint64) Item { return d.whole.Draw(n) }

// Part returns the dataset as the instance running share s draws it, the
// same Part (and draw counter) for every caller; the whole dataset when s is
// the whole test.
func (d *Dataset) Part(s Share) *Part {
	if s.Full() {
		return d.whole
	}
	key := s.Segment() + " in " + s.Sequence()
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.parts[key]
	if !ok {
		p = newPart(d, s)
		if d.parts == nil {
			d.parts = map[string]*Part{}
		}
		d.parts[key] = p
	}
	return p
}

// At returns item i of the dataset (i modulo Size), in category order.
func (d *Dataset) At(i int) (Item, error) {
	if len(d.items) == 0 {
		return Item{}, errors.New("empty dataset")
	}
	if i < 0 {
		return Item{}, fmt.Errorf("index %d is negative", i)
	}
	return d.busted(d.items[i%len(d.items)]), nil
}

func (d *Dataset) busted(it Item) Item {
	if d.images != nil {
		it = d.images.apply(it)
	}
	if d.bust == nil {
		return it
	}
	return d.bust.apply(it)
}

// Draws is how many items Next has handed out in this process.
func (d *Dataset) Draws() uint64 { return d.whole.Draws() }

// Info describes the dataset for scripts and logs.
func (d *Dataset) Info() Info { return d.info }
