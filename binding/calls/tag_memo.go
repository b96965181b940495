package calls

import (
	"strconv"
	"sync/atomic"

	"go.k6.io/k6/metrics"
)

// A client's last attempt tag set. k6 tag sets are interned (the same tags
// are the same *metrics.TagSet), so a call whose tags start from the same
// set and whose attempt ended the same way (status, cache, proto, error)
// has the very tag set the last one had. Building it took a lookup and a
// boxed key per tag, for every call; most calls of a client end alike, and
// the one set kept is reused. Calls finish on the workers concurrently, so
// the set is swapped whole.

// attemptTagKey is everything an attempt's tag set is built from.
type attemptTagKey struct {
	base                         *metrics.TagSet // the call's tags (k6's, the client's, the call's, the item's)
	systemTags                   *metrics.SystemTagSet
	protocol, name, model, route string
	tagRoute                     bool
	cache, proto, errorType      string
	failed                       bool
	status, attempt              int
}

type attemptTagEntry struct {
	key  attemptTagKey
	tags *metrics.TagSet
}

// tagMemo holds a client's last attempt tag set.
type tagMemo struct {
	last atomic.Pointer[attemptTagEntry]
}

// get is the tag set for key: the last one when key is the last key, else
// built and kept.
func (m *tagMemo) get(key *attemptTagKey) *metrics.TagSet {
	if m != nil {
		if e := m.last.Load(); e != nil && e.key == *key {
			return e.tags
		}
	}
	tags := key.build()
	if m != nil {
		m.last.Store(&attemptTagEntry{key: *key, tags: tags})
	}
	return tags
}

// knownProto is proto as one of the constant strings of the protocols a
// response comes in, when it is one: net/http makes each response's Proto
// a string of its own, and the memo's key comparison read both strings'
// bytes at every call, the kept one long out of the CPU's caches. Equal
// constants compare by their pointers alone.
func knownProto(proto string) string {
	switch proto {
	case "HTTP/1.1":
		return "HTTP/1.1"
	case "HTTP/2.0":
		return "HTTP/2.0"
	case "HTTP/1.0":
		return "HTTP/1.0"
	}
	return proto
}

// build adds an attempt's tags to the call's: the protocol, the name and
// status when k6's systemTags keep them, the model, the route when the
// client has a fallback, the cache state, the proto, the attempt's number
// after the first and the error type of a failed one.
func (key *attemptTagKey) build() *metrics.TagSet {
	has := func(t metrics.SystemTag) bool { return key.systemTags == nil || key.systemTags.Has(t) } // nil (no k6 options) keeps them all
	tags := key.base.With("protocol", key.protocol)
	if has(metrics.TagName) {
		tags = tags.With("name", key.name)
	}
	if key.model != "" {
		tags = tags.With("model", key.model)
	}
	if key.tagRoute {
		tags = tags.With("route", key.route)
	}
	tags = tags.With("cache", key.cache)
	if has(metrics.TagStatus) {
		tags = tags.With("status", strconv.Itoa(key.status))
	}
	if key.proto != "" && has(metrics.TagProto) {
		tags = tags.With("proto", key.proto)
	}
	if key.attempt > 1 {
		tags = tags.With("attempt", strconv.Itoa(key.attempt))
	}
	if key.failed {
		tags = tags.With("error_type", key.errorType)
	}
	return tags
}

// tagGetter is a call tag set and its Get as a function, which a call's
// record looks its tags up with: a method value made for each call was an
// allocation, for a tag set nearly always the last call's (k6's tag sets
// are immutable, and equal sets one value). The client keeps the last one
// (tagGetter.of, on the event loop, where calls plan); a route keeps its
// own, and takes a fresh Get when its tags changed since (lookup).
type tagGetter struct {
	tags *metrics.TagSet
	get  func(string) (string, bool)
}

// of is the Get of tags, the last one's when tags are the last tag set.
func (m *tagGetter) of(tags *metrics.TagSet) tagGetter {
	if m.get == nil || m.tags != tags {
		m.tags, m.get = tags, tags.Get
	}
	return *m
}

// lookup is tags' Get: g's when g was made for tags.
func (g tagGetter) lookup(tags *metrics.TagSet) func(string) (string, bool) {
	if g.get == nil || g.tags != tags {
		return tags.Get
	}
	return g.get
}
