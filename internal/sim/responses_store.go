package sim

import (
	"encoding/json"
	"sync"
)

// storedResponses bounds the Responses answers kept for previous_response_id.
// The simulator is otherwise stateless: it keeps the last this many answers'
// conversations (their input items and their output as input items) so that a
// chained turn is answered on its whole history, as the real API does, and
// answers 400 previous_response_not_found, as the real API does, for an id it
// never gave or has forgotten (the oldest go first).
const storedResponses = 4096

// responseStore is the Responses conversations by response id.
type responseStore struct {
	mu    sync.Mutex
	items map[string][]json.RawMessage
	order []string // ids in the order they were kept, the oldest first
}

// expand reads a Responses body's previous_response_id: the body with the
// stored conversation before its input and the field removed (the body
// unchanged when it names none), and the expanded input items, to keep with
// the answer.
func (s *responseStore) expand(body []byte) ([]byte, []json.RawMessage, *apiError) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return body, nil, nil // parse says what is wrong with it
	}
	input, err := inputItems(req["input"])
	if err != nil {
		return body, nil, nil
	}
	raw, named := req["previous_response_id"]
	if !named || string(raw) == "null" {
		return body, input, nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		return nil, nil, badRequest("previous_response_id", "Invalid type for 'previous_response_id': expected a string.")
	}
	s.mu.Lock()
	prev, ok := s.items[id]
	s.mu.Unlock()
	if !ok {
		e := badRequest("previous_response_id", "Previous response with id '"+id+"' not found.")
		e.Code = "previous_response_not_found"
		return nil, nil, e
	}
	all := append(append(make([]json.RawMessage, 0, len(prev)+len(input)), prev...), input...)
	req["input"] = json.RawMessage(mustJSON(all))
	delete(req, "previous_response_id")
	return mustJSON(req), all, nil
}

// inputItems is input as a list of items: a string is one user message.
func inputItems(raw json.RawMessage) ([]json.RawMessage, error) {
	if len(raw) > 0 && raw[0] == '"' {
		return []json.RawMessage{mustJSON(map[string]json.RawMessage{"role": json.RawMessage(`"user"`), "content": raw})}, nil
	}
	var items []json.RawMessage
	err := json.Unmarshal(raw, &items)
	return items, err
}

// keep stores an answer's conversation under its id: its input items, then
// its output as input items.
func (s *responseStore) keep(id string, input []json.RawMessage, output []any) {
	conv := make([]json.RawMessage, 0, len(input)+len(output))
	conv = append(conv, input...)
	for _, o := range output {
		conv = append(conv, mustJSON(o))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = map[string][]json.RawMessage{}
	}
	if len(s.order) >= storedResponses {
		delete(s.items, s.order[0])
		s.order = s.order[1:]
	}
	s.items[id] = conv
	s.order = append(s.order, id)
}
