package sim

// namedEvents builds SSE events that carry an event: line equal to their
// JSON type, as Anthropic and the Responses API send them. One buffer is
// reused: an event is written before the next is built.
type namedEvents struct{ buf []byte }

// begin starts an event named name; the caller appends its JSON data, then
// calls end.
func (n *namedEvents) begin(name string) []byte {
	b := append(n.buf[:0], "event: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// end closes the event started by begin.
func (n *namedEvents) end(b []byte) []byte {
	b = append(b, "\n\n"...)
	n.buf = b
	return b
}

// typed starts an event whose data begins {"type":"<name>" (the caller adds
// the other members and the closing brace).
func (n *namedEvents) typed(name string) []byte {
	b := n.begin(name)
	b = append(b, `{"type":"`...)
	b = append(b, name...)
	return append(b, '"')
}
