package config

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// ServerMetrics names one Prometheus endpoint read beside the load
// (internal/servermetrics): the inference server's own, a GPU exporter's
// (NVIDIA DCGM), another replica's. It is a Client option because the servers
// are the ones behind that client's baseURL: the report sets their view
// beside that client's figures. Clients naming the same url share one scrape.
type ServerMetrics struct {
	URL string `opt:"url" want:"the endpoint, e.g. 'http://vllm:8000/metrics'"`
	// Source names the endpoint in the k6 tag "source" and the report (e.g.
	// 'engine', 'dcgm', 'replica-2'); absent, the url's host:port. Several
	// endpoints of one client need distinct sources, or their samples could
	// not be told apart.
	Source string `opt:"source"`
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
	// Models is where the engine lists its served models and their context
	// length (OpenAI's /v1/models, vLLM's max_model_len): absent, beside
	// the metrics path of an engine that serves one; 'off', not read.
	Models string `opt:"models" want:"'off' or the list's url, e.g. 'http://vllm:8000/v1/models'"`
}

// minServerMetricsInterval keeps scraping cheap: each scrape parses the
// whole exposition.
const minServerMetricsInterval = 50 * time.Millisecond

// sourcePattern keeps a source usable as a k6 tag value and a report label.
var sourcePattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`) //nolint:gochecknoglobals // compiled once

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
	if m := strings.TrimSpace(s.Models); m != "" && m != "off" {
		mu, err := url.Parse(m)
		if err != nil || (mu.Scheme != "http" && mu.Scheme != "https") || mu.Host == "" {
			return fieldErr("models", "must be 'off' or http(s)://host[:port]/v1/models")
		}
	}
	if s.Source == "" {
		s.Source = u.Host // never user info: url.URL keeps that apart
	} else if !sourcePattern.MatchString(s.Source) {
		return fieldErr("source", "must be 1 to 64 letters, digits or _ . : - (it is a k6 tag value), got %q", s.Source)
	}
	return nil
}

// ServerMetricsList is the serverMetrics option: one endpoint written as an
// object (the first form, kept), or several as a list of them.
type ServerMetricsList []ServerMetrics

// decodeServerMetrics reads {url, …} or [{url, …}, …]; two endpoints of one
// list may share neither url nor source.
func decodeServerMetrics(rv reflect.Value, v any, f field) error {
	var list []any
	switch x := v.(type) {
	case map[string]any:
		list = []any{x}
	case []any:
		if len(x) == 0 {
			return &fieldError{problem: "must name at least one endpoint (leave the option out for none)"}
		}
		list = x
	default:
		return wrongType("", v, f.want, "an object like {url: 'http://vllm:8000/metrics'} or a list of them")
	}
	out := make(ServerMetricsList, len(list))
	urls, sources := map[string]int{}, map[string]int{}
	for i, e := range list {
		path := ""
		if _, isList := v.([]any); isList {
			path = fmt.Sprintf("[%d]", i)
		}
		if err := decodeValue(reflect.ValueOf(&out[i]).Elem(), e, path, field{}); err != nil {
			return err
		}
		if j, dup := urls[out[i].URL]; dup {
			return under(path, fieldErr("url", "names the same endpoint as [%d]: give each endpoint once", j))
		}
		if j, dup := sources[out[i].Source]; dup {
			return under(path, fieldErr("source", "%q is [%d]'s too: give each endpoint its own source", out[i].Source, j))
		}
		urls[out[i].URL], sources[out[i].Source] = i, i
	}
	rv.Set(reflect.ValueOf(out))
	return nil
}
