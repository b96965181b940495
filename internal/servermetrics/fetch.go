package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxBodyBytes bounds one scrape's body: a vLLM exposition is tens of KiB; a
// body past this is not a metrics page worth holding.
const maxBodyBytes = 16 << 20

// acceptHeader asks for the text format first (what expfmt parses
// natively) and takes OpenMetrics.
const acceptHeader = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// Problem kinds, one warning each per endpoint.
const (
	ProblemUnreachable = "unreachable"   // connect or DNS
	ProblemTimeout     = "timeout"       // no answer within the scrape's timeout
	ProblemStatus      = "http_status"   // a status other than 200
	ProblemNotMetrics  = "not_metrics"   // HTML, JSON, or nothing parseable
	ProblemGarbage     = "garbage"       // lines dropped, the rest read
	ProblemSlow        = "slow"          // a scrape took longer than the interval
	ProblemReset       = "counter_reset" // a counter went down (a restart)
	ProblemNonFinite   = "non_finite"    // a series was NaN or ±Inf
	ProblemGPULost     = "gpu_lost"      // a GPU vanished from the exporter
	// ProblemUnknownEngine: the exposition has no family of a known engine.
	ProblemUnknownEngine = "unknown_engine"
)

// scrapeError is a failed scrape, classified.
type scrapeError struct {
	kind string
	msg  string
}

func (e *scrapeError) Error() string { return e.msg }

// displayURL is the endpoint as messages and records show it: no user
// info, no query values (either may carry a token).
func displayURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{"REDACTED"}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// fetch GETs the endpoint. Its errors name the display URL, never a header.
func (s *Scraper) fetch(ctx context.Context) ([]byte, string, error) {
	body, contentType, f := s.get(ctx, s.url, acceptHeader, s.maxBody)
	if f == nil {
		return body, contentType, nil
	}
	switch f.stage {
	case getRequest:
		return nil, "", &scrapeError{kind: ProblemUnreachable, msg: "serverMetrics " + s.display + ": " + f.cause}
	case getConnect:
		return nil, "", &scrapeError{kind: ProblemUnreachable, msg: fmt.Sprintf("serverMetrics %s unreachable: %s", s.display, f.cause)}
	case getRead:
		return nil, "", &scrapeError{kind: ProblemUnreachable, msg: fmt.Sprintf("serverMetrics %s: reading the body: %s", s.display, f.cause)}
	case getStatus:
		msg := fmt.Sprintf("serverMetrics %s answered HTTP %d", s.display, f.status)
		switch f.status {
		case http.StatusUnauthorized, http.StatusForbidden:
			msg += ": check the credentials in serverMetrics headers"
		case http.StatusNotFound:
			msg += ": no metrics there (SGLang needs --enable-metrics, llama.cpp --metrics; TRT-LLM serves Prometheus at /prometheus/metrics)"
		}
		return nil, "", &scrapeError{kind: ProblemStatus, msg: msg}
	}
	return nil, "", &scrapeError{kind: ProblemNotMetrics, msg: fmt.Sprintf("serverMetrics %s: body larger than %s", s.display, sizeText(s.maxBody))}
}

// getStage is where a GET failed.
type getStage int

const (
	getRequest  getStage = iota // the request could not be made
	getConnect                  // no response: connect, DNS, TLS, timeout
	getRead                     // the body broke off
	getStatus                   // a status other than 200
	getTooLarge                 // a body past the limit
)

// getFailure is a failed GET: its stage, the status, and the cause with
// header values and the URL's password taken out.
type getFailure struct {
	stage  getStage
	status int
	cause  string
}

// get GETs u with the scrape's headers, the body read up to limit bytes:
// the one request path of the scrapes and the model list, each wording its
// own failures.
func (s *Scraper) get(ctx context.Context, u *url.URL, accept string, limit int) ([]byte, string, *getFailure) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", &getFailure{stage: getRequest, cause: s.clean(err.Error())}
	}
	req.Header.Set("Accept", accept)
	for k, v := range s.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, user info included
		}
		return nil, "", &getFailure{stage: getConnect, cause: s.clean(err.Error())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	switch {
	case err != nil:
		return nil, "", &getFailure{stage: getRead, cause: s.clean(err.Error())}
	case resp.StatusCode != http.StatusOK:
		return nil, "", &getFailure{stage: getStatus, status: resp.StatusCode}
	case len(body) > limit:
		return nil, "", &getFailure{stage: getTooLarge}
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// clean removes header values from an error text (a transport error may
// quote what it sent).
func (s *Scraper) clean(msg string) string {
	for _, v := range s.cfg.Headers {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "[REDACTED]")
		}
	}
	if pw, ok := s.url.User.Password(); ok && len(pw) > 0 {
		msg = strings.ReplaceAll(msg, pw, "[REDACTED]")
	}
	return msg
}

// sizeText is a body limit as messages give it: whole MiB or KiB, else bytes.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
