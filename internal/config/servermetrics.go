package config

import (
	"net/url"
	"strings"
	"time"
)

// ServerMetrics names the inference server's own Prometheus endpoint, read
// beside the load (internal/servermetrics). It is a Client option because the
// server is the one behind that client's baseURL: the report sets its view
// beside that client's figures. Clients naming the same url share one scrape.
type ServerMetrics struct {
	URL string `opt:"url" want:"the endpoint, e.g. 'http://vllm:8000/metrics'"`
	// Headers go with every scrape (e.g. Authorization); like apiKey, their
	// values never appear in a message, tag or report.
	Headers map[string]string `opt:"headers"`
	// Interval is between scrapes, Timeout bounds one: absent (0), the
	// scraper's defaults (1 s, 10 s); given, above 0, as a 0 would be a
	// scrape without pause or one that cannot succeed, not the default.
	Interval time.Duration `opt:"interval,positive"`
	Timeout  time.Duration `opt:"timeout,positive"`
	// Model keeps only the series of that served model; "" = all, summed.
	Model string `opt:"model"`
}

// minServerMetricsInterval keeps scraping cheap: each scrape parses the
// whole exposition.
const minServerMetricsInterval = 50 * time.Millisecond

func (s *ServerMetrics) check() error {
	s.URL = strings.TrimSpace(s.URL)
	if s.URL == "" {
		return fieldErr("url", "is required (e.g. 'http://vllm:8000/metrics')")
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldErr("url", "must be http(s)://host[:port]/path")
	}
	if s.Interval != 0 && s.Interval < minServerMetricsInterval {
		return fieldErr("interval", "must be at least %v (each scrape parses the whole exposition), got %v", minServerMetricsInterval, s.Interval)
	}
	return nil
}
