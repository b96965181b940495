package sim

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The faults a request meets before its answer, shared by the generation
// and the retrieval routes.

// requestFaults is a request's faults: its X-Sim-Fault header, else a draw
// from the model's fault mix.
func (m *model) requestFaults(r *http.Request) (Faults, error) {
	if hv := r.Header.Values(FaultHeader); len(hv) > 0 {
		return ParseFaults(strings.Join(hv, ","))
	}
	m.rngMu.Lock()
	defer m.rngMu.Unlock()
	return m.faults.draw(m.rng), nil
}

// answeredByFault serves the faults that come before any work on the
// request: a delay before the headers, then an error status or an HTML
// page. It says whether the request is done (answered by one, or left by
// its client during the delay).
func (s *Server) answeredByFault(w http.ResponseWriter, r *http.Request, rec *TraceRecord, faults Faults,
	fail func(*apiError, Outcome)) bool {
	if faults.HeadersDelay > 0 && !s.sleep(r.Context(), faults.HeadersDelay) {
		rec.Outcome = OutcomeCanceled
		return true
	}
	if st := faults.Status; st != 0 {
		fail(statusFault(w, st), OutcomeStatus)
		return true
	}
	if faults.HTML {
		writeHTMLFault(w, rec)
		return true
	}
	return false
}

// statusFault is the error of a status=CODE fault (a 429 with Retry-After).
func statusFault(w http.ResponseWriter, st int) *apiError {
	e := &apiError{Status: st, Type: "server_error", Message: fmt.Sprintf("llm-sim fault: HTTP %d", st)}
	switch {
	case st == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		e.Type, e.Code = "rate_limit_error", "rate_limit_exceeded"
	case st < 500:
		e.Type = "invalid_request_error"
	}
	return e
}

// writeHTMLFault answers 200 with an HTML page (the html fault).
func writeHTMLFault(w http.ResponseWriter, rec *TraceRecord) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, htmlPage)
	rec.Status, rec.Outcome = http.StatusOK, OutcomeHTML
}
