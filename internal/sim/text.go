package sim

import (
	"strings"
	"sync"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// vocabText holds the pseudo-words of generated output. Each, with its
// leading space, is exactly one o200k_base token (a test checks it), so a
// client's tokenizer counts the text as exactly completion_tokens.
const vocabText = `the of and to in is was for that with as on by at from his an which are this
be had it not or have but were her their one all its has been also who they new more two first
after other she into time when there year some would made can may used only over most these such
about part three many him world later people state then between during under city well school where
than war both through known being while found since four them team same work because each season
those life before five early took use united including name area series government became second
however several national until public around film best number high could end against without
village game group family north south population music following based system did history american
country called member album although played west company east large death home long small within
last left town great back another river single place party local free university league county form
power general even came line club major region set water light open play main old good book point
age land case human class often side law lord order way few must head story show near start field
held support term event office third still role king act late love built short child body title
center army cell sea air fire day night sun moon star tree stone gold iron door road wall hand eye
face word voice`

var vocab = func() []string { //nolint:gochecknoglobals // read-only table
	f := strings.Fields(vocabText)
	out := make([]string, len(f))
	for i, w := range f {
		out[i] = " " + w
	}
	return out
}()

// vocabIDs are the token ids of vocab (for prefix-cache keys of generated text).
var vocabIDs = sync.OnceValue(func() []uint32 { //nolint:gochecknoglobals // computed once
	ids := make([]uint32, len(vocab))
	tk, err := tokenizer.Get("")
	if err != nil {
		return ids
	}
	for i, w := range vocab {
		if e := tk.Encode(w); len(e) > 0 {
			ids[i] = uint32(e[0]) //nolint:gosec // token ids fit
		}
	}
	return ids
})

// splitmix64 is a stateless mixer: the i-th word of a request depends only on
// its seed and i, so text is reproducible and rendered in any order.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// wordIndex is the vocabulary index of output token i.
func wordIndex(seed uint64, i int) int {
	return int(splitmix64(seed^uint64(i)*0xd6e8feb86659fd93) % uint64(len(vocab))) // #nosec G115 -- i >= 0
}

// appendWords appends output tokens [from, from+n) of a request.
func appendWords(dst []byte, seed uint64, from, n int) []byte {
	for i := from; i < from+n; i++ {
		dst = append(dst, vocab[wordIndex(seed, i)]...)
	}
	return dst
}

// hashString is FNV-1a of s, mixed with h.
func hashString(h uint64, s string) uint64 {
	if h == 0 {
		h = fnvOffset
	}
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}
