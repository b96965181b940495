package sim

import "container/list"

// prefixCache is an LRU of KV blocks keyed by chained hashes: block i's key
// hashes block i-1's key with block i's token ids, so a block matches only
// when the whole prefix before it matches too (as in vLLM's automatic prefix
// caching). Only whole blocks are cached. Not safe for concurrent use: the
// engine holds its lock.
type prefixCache struct {
	blockTokens int
	capacity    int
	lru         *list.List // of uint64, most recent at the front
	index       map[uint64]*list.Element
}

func newPrefixCache(blockTokens, capacity int) *prefixCache {
	return &prefixCache{
		blockTokens: blockTokens,
		capacity:    capacity,
		lru:         list.New(),
		index:       make(map[uint64]*list.Element, min(capacity, 1<<16)),
	}
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// blockHashes returns the chained keys of the whole blocks of ids.
func (c *prefixCache) blockHashes(ids []uint32) []uint64 {
	n := len(ids) / c.blockTokens
	out := make([]uint64, n)
	h := uint64(fnvOffset)
	for b := range n {
		for _, id := range ids[b*c.blockTokens : (b+1)*c.blockTokens] {
			for s := 0; s < 32; s += 8 {
				h ^= uint64(byte(id >> s)) // #nosec G115 -- one byte of the id at a time: the truncation is the point
				h *= fnvPrime
			}
		}
		out[b] = h
		h ^= 0xff // block separator, so the chain differs from one long block
		h *= fnvPrime
	}
	return out
}

// match counts the leading blocks of keys that are cached, marking them used.
// At most limit blocks are matched.
func (c *prefixCache) match(keys []uint64, limit int) int {
	n := 0
	for _, k := range keys[:min(len(keys), limit)] {
		if _, ok := c.index[k]; !ok {
			break
		}
		n++
	}
	// Touch the chain from its end, so its first block is the most recent:
	// eviction then shortens a prefix instead of breaking it at its root.
	for i := n - 1; i >= 0; i-- {
		c.lru.MoveToFront(c.index[keys[i]])
	}
	return n
}

// insert caches keys (marking them most recently used, the first block
// most), evicting the least recently used blocks beyond capacity.
func (c *prefixCache) insert(keys []uint64) {
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		if e, ok := c.index[k]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.index[k] = c.lru.PushFront(k)
		for c.lru.Len() > c.capacity {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.index, old.Value.(uint64)) //nolint:forcetypeassert // only uint64 is stored
		}
	}
}

// len is the number of cached blocks.
func (c *prefixCache) len() int { return c.lru.Len() }
