package protocol

import (
	"net/http"
	"strings"
)

func init() {
	Register(&Spec{
		Name:    "sse",
		Framing: FramingSSE,
		Path:    func(Request) string { return "" }, // the caller gives the whole URL or path
		Prepare: noPrepare,
		Headers: func(h http.Header, r Request) {
			bearer(h, r)
			streamHeaders(h, "text/event-stream")
		},
		NewDecoder:    func() Decoder { return rawSSE{} },
		CompleteAtEOF: true,
	})
}

// rawSSE reads any event stream without knowing its payload: every non-empty
// data event is output (the first one is the first token), its data is the
// text. There is no terminal event, so a clean end of the body completes the
// call (Spec.CompleteAtEOF).
type rawSSE struct{}

func (rawSSE) Decode(ev Event, d *Delta) error {
	// Conventions common enough to honour: a [DONE] sentinel ends the stream
	// and is not output; an "error" event is the server reporting a failure.
	if strings.TrimSpace(ev.Data) == doneSentinel {
		d.EndOfStream = true
		return nil
	}
	if ev.Type == "error" {
		d.Err = &StreamError{Message: ev.Data}
		return nil
	}
	d.Text = ev.Data
	return nil
}
