package dataset

import "sync/atomic"

// Part is a dataset as one instance of a split test draws it (see Share).
//
// The unit that is split is the conversation (a single prompt is a
// conversation of one turn): every conversation belongs to one instance, so
// its turns all go out from the same load generator, in order. Conversations
// are striped within the category of their first turn, in dataset order, so
// every instance holds its fraction of every category, and each instance draws
// its own items with the same category schedule as a single instance would.
// Two consequences:
//   - no item is drawn by two instances, and each instance keeps the mix on
//     its own, so the mix also holds over the union whatever each instance's
//     pace;
//   - when each instance makes its share of the draws and that share splits
//     over the categories as the items do (say 120 iterations of a 1:1 mix
//     over 2, 3 or 4 instances), the instances together draw exactly the
//     items a single instance would; otherwise the union differs only at the
//     end of each category's sequence, by about one item per instance, and
//     an instance may start its second pass an item or two before a single
//     instance would.
//
// A category with fewer conversations than it would take to give every
// instance one cannot be split; every instance then draws all of it, and
// Unsplit names it.
type Part struct {
	d       *Dataset
	share   Share
	items   [][]int // per drawn category: indices into d.items, in draw order
	unsplit []string
	draws   atomic.Uint64
}

func newPart(d *Dataset, s Share) *Part {
	p := &Part{d: d, share: s, items: make([][]int, len(d.cats))}
	if s.Full() {
		for c := range d.cats {
			p.items[c] = d.cats[c].items
		}
		return p
	}
	owned := d.ownedBy(s)
	for c, cat := range d.cats {
		var mine []int
		for _, i := range cat.items {
			if owned[i] {
				mine = append(mine, i)
			}
		}
		if len(mine) == 0 {
			mine = cat.items
			p.unsplit = append(p.unsplit, cat.name)
		}
		p.items[c] = mine
	}
	return p
}

// ownedBy says, per item, whether its conversation belongs to share s.
func (d *Dataset) ownedBy(s Share) []bool {
	convs := map[string]bool{}     // conversation id → owned
	ordinal := map[string]uint64{} // units seen so far, per category of their first turn
	out := make([]bool, len(d.items))
	for i := range d.items {
		it := &d.items[i]
		owned, seen := convs[it.Conversation]
		if !seen || it.Conversation == "" { // an item outside any conversation is a unit of its own
			owned = s.Owns(ordinal[it.Category])
			ordinal[it.Category]++
			if it.Conversation != "" {
				convs[it.Conversation] = owned
			}
		}
		out[i] = owned
	}
	return out
}

// Next returns this instance's next draw: whichever VU calls, the draws keep
// the mix's proportions (see schedule).
func (p *Part) Next() Item { return p.Draw(p.draws.Add(1) - 1) }

// Draw returns this instance's draw n without advancing Next, so a script can
// key on k6's iteration number in this instance for a run that is
// reproducible draw by draw. Within a category items come in turn (a
// conversation's turns in order).
func (p *Part) Draw(n uint64) Item {
	c, occ := p.d.sched.at(n)
	idx := p.items[c]
	return p.d.busted(p.d.items[idx[occ%uint64(len(idx))]])
}

// Take returns the whole test's draw g and counts it among this instance's
// draws. g is an index the instances never share (k6's iteration number in
// the test), so the instances together draw exactly what one instance would,
// whatever share of the draws each one makes: the striping by conversation
// only holds when each instance makes its own share, which k6 does not
// promise (its iterations follow its VUs).
func (p *Part) Take(g uint64) Item {
	p.draws.Add(1)
	return p.d.whole.Draw(g)
}

// Draws is how many items Next and Take have handed out in this instance.
func (p *Part) Draws() uint64 { return p.draws.Load() }

// Share is the part of the test this instance runs.
func (p *Part) Share() Share { return p.share }

// Items is how many distinct items this instance draws from.
func (p *Part) Items() int {
	n := 0
	for _, idx := range p.items {
		n += len(idx)
	}
	return n
}

// Unsplit lists the categories too small to split: every instance draws all
// of their items.
func (p *Part) Unsplit() []string { return p.unsplit }
