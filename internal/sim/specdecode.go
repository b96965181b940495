package sim

import (
	"fmt"
	"strings"
)

// writeSpecDecode writes vLLM's speculative-decoding counters for the
// models that have spec_decode_acceptance set (vLLM exposes them only when
// speculative decoding is on).
func (s *Server) writeSpecDecode(b *strings.Builder, snaps []engineSnapshot, labels []string) {
	var on []int
	for i, m := range s.order {
		if len(m.eng.p.SpecDecodeAcceptance) > 0 {
			on = append(on, i)
		}
	}
	if len(on) == 0 {
		return
	}
	sum := func(st engineStats) int64 {
		var n int64
		for _, a := range st.specAccepted {
			n += a
		}
		return n
	}
	for _, f := range []struct {
		name, help string
		v          func(i int) int64
	}{
		{"vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", func(i int) int64 { return snaps[i].stats.specDrafts }},
		{"vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", func(i int) int64 {
			return snaps[i].stats.specDrafts * int64(len(s.order[i].eng.p.SpecDecodeAcceptance))
		}},
		{"vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", func(i int) int64 { return sum(snaps[i].stats) }},
	} {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n", f.name, f.help, f.name)
		for _, i := range on {
			fmt.Fprintf(b, "%s{%s} %d\n", f.name, labels[i], f.v(i))
		}
	}
	const perPos = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
	fmt.Fprintf(b, "# HELP %s Accepted tokens per draft position.\n# TYPE %s counter\n", perPos, perPos)
	for _, i := range on {
		for pos := range s.order[i].eng.p.SpecDecodeAcceptance {
			var n int64
			if pos < len(snaps[i].stats.specAccepted) {
				n = snaps[i].stats.specAccepted[pos]
			}
			fmt.Fprintf(b, "%s{%s,position=\"%d\"} %d\n", perPos, labels[i], pos, n)
		}
	}
}
