package trace

// Reuse is the prefix reuse the trace itself predicts with an infinite
// cache: the share of prompt tokens in leading blocks that an earlier row
// already sent (its ids, in the same order from the start). 0 and false for
// traces without prefix identity.
//
// Hash ids in these traces are block hashes of the whole prefix up to the
// block, so an id seen before means the same prefix; ids are tracked in a
// bitset (one bit per id up to the largest), not a map, so a trace of
// millions of rows is measured in a few megabytes.
func (t *Trace) Reuse() (float64, bool) {
	if !t.HasPrefixes() {
		return 0, false
	}
	seen := make([]uint64, max(t.rows.maxID(), 0)/64+1)
	var hit, total int64
	bs := int64(t.BlockSize)
	c := t.rows.cursor(0)
	var ids []uint32
	for range t.Rows() {
		ids = ids[:0]
		_, in32, _ := c.next(&ids)
		in := int64(in32)
		total += in
		prefix := true
		for j, h := range ids {
			w, bit := h/64, uint64(1)<<(h%64)
			if prefix && seen[w]&bit != 0 {
				hit += min(bs, in-int64(j)*bs)
			} else {
				prefix = false
			}
			seen[w] |= bit
		}
	}
	if total == 0 {
		return 0, true
	}
	return float64(hit) / float64(total), true
}
