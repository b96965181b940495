package runrecord

// Finding is one diagnosis: a stable id, the numbers that support it and what
// to do next. Values repeats the key numbers for machines (the JSON record).
type Finding struct {
	ID       string             `json:"id"`
	Title    string             `json:"title"`
	Severity string             `json:"severity"` // "warning": results or service need attention; "info": how to read them
	Evidence []string           `json:"evidence"`
	Advice   string             `json:"advice"`
	Values   map[string]float64 `json:"values,omitempty"`
	// Client is the client the finding is about when the run had several.
	Client string `json:"client,omitempty"`
}

// ClientLabel names a client in the report ("(unnamed)" for a Client without a name).
func ClientLabel(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return name
}
