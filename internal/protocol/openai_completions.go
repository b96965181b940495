package protocol

import "github.com/tidwall/gjson"

func init() {
	Register(&Spec{
		Name:             "openai-completions",
		Framing:          FramingSSE,
		Path:             func(Request) string { return "/completions" },
		Prepare:          prepareOpenAI,
		Headers:          openAIHeaders,
		NewDecoder:       func() Decoder { return &openAICompletions{} },
		OutputLimitField: "max_tokens",
		LengthFinish:     "length",
	})
}

// openAICompletions decodes the legacy text_completion stream: the same chunk
// as chat, with the text in choices[].text instead of a delta.
type openAICompletions struct{}

func (*openAICompletions) Decode(ev Event, d *Delta) error {
	return decodeOpenAIChunk(ev, d, func(ch gjson.Result, d *Delta) {
		d.Text += str(ch, "text")
		setFinish(d, str(ch, "finish_reason"))
		d.Choice = int(ch.Get("index").Int())
	})
}
