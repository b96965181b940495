package sim

// eachToken calls fn for each of the n tokens of an engine step's text, in
// order. Generated text is vocabulary words, each one token with its leading
// space, so a token runs to the next space. Protocols that send one event
// per token (TGI, raw SSE) split the step with it.
func eachToken(text []byte, n int, fn func(i int, token []byte) error) error {
	for i := range n {
		end := len(text)
		if i < n-1 {
			end = 1
			for end < len(text) && text[end] != ' ' {
				end++
			}
		}
		if err := fn(i, text[:end]); err != nil {
			return err
		}
		text = text[end:]
	}
	return nil
}
