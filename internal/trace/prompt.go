package trace

import (
	"errors"
	"math/rand/v2"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// Prompts builds each row's prompt on demand: exactly its input length in
// tokens of the tokenizer, made of words that are one token each with their
// leading space (so tokens never merge across words, and blocks concatenate
// to exact counts).
//
// Rows with hash ids are built block by block: the text of a block is drawn
// from a stream seeded by the chain of ids up to it (the seed, then each id
// in turn), so two rows that share leading ids share those blocks' text
// exactly and a prefix cache sees what production saw, while the same id
// after a different prefix gets different text. A shorter last block is the
// start of the same block's text, so a row ending inside a block still
// shares its prefix. Rows without prefix identity get unique text per credit.
type Prompts struct {
	t     *Trace
	words []string
	seed  uint64
}

// lexicon is the words prompts are made of; NewPrompts keeps those that are
// one token with a leading space in the chosen tokenizer.
//
//nolint:gochecknoglobals // a read-only word list
var lexicon = strings.Fields(`the of and to in for on with at by from as is was are be this that it not or
have has had but what all were when we there can an your which their said if do will each about how up out them
then she many some so these would other into more her two like him see time could no make than first been its who
now people my made over did down only way find use may water long little very after words called just where most
know get through back much go good new write our me man too any day same right look think also around another came
come work three word must because does part even place well such here take why help put different away again off
went old number great tell men say small every found still between name should home big give air line set own under
read last never us left end along while might next sound below saw something thought both few those always looked
show large often together asked house world going want school important until form food keep children feet land side
without boy once animal life enough took four head above kind began almost live page got earth need far hand high
year mother light country father let night picture being study second soon story since white ever paper hard near
sentence better best across during today however sure knew try told young sun thing whole hear example heard several
change answer room sea against top turned learn point city play toward five himself usually money seen car morning
order report market price plan team project service table service model river table window garden letter summer`)

// NewPrompts checks the lexicon against tk and returns the builder.
func NewPrompts(t *Trace, tk *tokenizer.Tokenizer, seed uint64) (*Prompts, error) {
	seen := map[string]bool{}
	var words []string
	for _, w := range lexicon {
		w = " " + w
		if !seen[w] && tk.Count(w) == 1 {
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(words) < 64 {
		return nil, errors.New("trace prompts: the tokenizer splits too many common words to build exact prompts")
	}
	return &Prompts{t: t, words: words, seed: seed}, nil
}

// Prompt is row i's prompt; unique tells apart repeats of a row without
// prefix identity (the credit's number).
func (p *Prompts) Prompt(i int, unique uint64) string {
	c := p.t.rows.cursor(i)
	var ids []uint32
	_, in32, _ := c.next(&ids)
	in := int(in32)
	var sb strings.Builder
	sb.Grow(in * 7)
	if len(ids) == 0 {
		p.block(&sb, mix(mix(p.seed, 0x756e69717565), unique), in)
		return sb.String()
	}
	key := p.seed
	bs := p.t.BlockSize
	for j, id := range ids {
		key = mix(key, uint64(id))
		n := bs
		if j == len(ids)-1 {
			n = in - j*bs
		}
		p.block(&sb, key, n)
	}
	return sb.String()
}

// block writes n words drawn from the stream seeded by key.
func (p *Prompts) block(sb *strings.Builder, key uint64, n int) {
	r := rand.New(rand.NewPCG(key, 0x626c6f636b)) // #nosec G404 -- text, not crypto
	for range n {
		sb.WriteString(p.words[r.IntN(len(p.words))])
	}
}

// mix chains a key with a value (splitmix64 of their combination).
func mix(h, v uint64) uint64 {
	z := h ^ (v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2))
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
