package runstate

import (
	"encoding/json"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/fingerprint"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// runInfoState gathers, once per process, how the run is made, for the run
// record: the Clients and Datasets as scripts create them (every VU creates
// the same ones in its init context, so they are kept by identity), and k6's
// resolved scenarios and execution segment, read from the first call's VU
// state (k6 has not consolidated its options in the init context, and
// handleSummary's VU may not carry them).
type RunInfoState struct {
	mu       sync.Mutex
	clients  map[runrecord.ClientInfo]bool
	datasets map[string]runrecord.DatasetInfo // by the dataset's build key
	load     map[string]any
	segment  string
	sequence string
	noted    atomic.Bool
	fp       fingerprintState
}

func (s *RunInfoState) addClient(ci runrecord.ClientInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = map[runrecord.ClientInfo]bool{}
	}
	s.clients[ci] = true
}

func (s *RunInfoState) addDataset(key string, di runrecord.DatasetInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.datasets == nil {
		s.datasets = map[string]runrecord.DatasetInfo{}
	}
	s.datasets[key] = di
}

// registerClient records a Client's settings that change what is measured;
// the host is kept without user, password, path or query. label is the
// label its calls carry, fallback its fallback Client's ("" for none): the
// fingerprint keeps the digest of its options under it.
func (s *RunInfoState) RegisterClient(opts *config.Client, label, fallback string) {
	ci := runrecord.ClientInfo{Name: opts.Name, Model: opts.Model, Host: runrecord.ClientHost(opts.BaseURL)}
	if opts.Protocol != nil {
		ci.Protocol = opts.Protocol.Name
	}
	s.addClient(ci)
	if d, err := fingerprint.ClientDigest(opts, fallback); err == nil {
		s.fp.noteClient(fingerprint.Client{Label: label, Digest: d})
	}
}

// registerDataset records a Dataset's identity: its source, the options as
// the script gave them, its size and, for a file, a digest of the bytes.
func (s *RunInfoState) RegisterDataset(key, source string, opts sobek.Value, items int, digest string) {
	var o map[string]any
	if !common.IsNullish(opts) {
		if b, err := json.Marshal(opts.Export()); err == nil {
			_ = json.Unmarshal(b, &o)
		}
	}
	s.addDataset(key, runrecord.DatasetInfo{Source: source, Options: o, Items: items, Digest: digest})
}

// RegisterTrace records a Schedule.trace's identity as a data set's: its
// file as the script named it, the options (but fromDisk, which changes
// how the file is read, not the test), its rows and the digest of the bytes
// the rows were read from (all of the file unless a window or maxRows ended
// the reading early).
func (s *RunInfoState) RegisterTrace(key, source string, opts sobek.Value, rows int, digest string) {
	var o map[string]any
	if !common.IsNullish(opts) {
		if b, err := json.Marshal(opts.Export()); err == nil {
			_ = json.Unmarshal(b, &o)
		}
		delete(o, "fromDisk")
	}
	s.addDataset(key, runrecord.DatasetInfo{Source: source, Options: o, Items: rows, Digest: digest})
}

// noteLoad reads k6's scenarios and this instance's execution segment from
// the VU state, once per process; calls after the first cost one atomic load.
func (s *RunInfoState) NoteLoad(sc k6env.VUScope) {
	if s.noted.Load() {
		return
	}
	st := sc.VU.State()
	if st == nil {
		return
	}
	var load map[string]any
	if b, err := json.Marshal(st.Options.Scenarios); err == nil {
		_ = json.Unmarshal(b, &load)
	}
	s.fp.noteOptions(st.Options)
	share, ok, err := sc.ExecutionShare()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load = load
	if ok && err == nil && !share.Full() {
		s.segment, s.sequence = share.Segment(), share.Sequence()
	}
	s.noted.Store(true)
}

// runInfo is what the run record says about how the run was made, and the
// test's fingerprint.
func (s *RunInfoState) RunInfo(sc k6env.VUScope, moduleVersion string) *runrecord.RunInfo {
	ri := s.runInfo(sc, moduleVersion)
	ri.Fingerprint = s.fingerprint(ri.Datasets, ri.SegmentSequence)
	return ri
}

func (s *RunInfoState) runInfo(sc k6env.VUScope, moduleVersion string) *runrecord.RunInfo {
	s.NoteLoad(sc) // a run that made no call still says which segment it covered
	s.mu.Lock()
	defer s.mu.Unlock()
	ri := &runrecord.RunInfo{
		K6Version: K6Version(), ModuleVersion: moduleVersion, Load: s.load,
		Segment: s.segment, SegmentSequence: s.sequence,
	}
	for ci := range s.clients {
		ri.Clients = append(ri.Clients, ci)
	}
	sort.Slice(ri.Clients, func(i, j int) bool {
		a, b := ri.Clients[i], ri.Clients[j]
		return a.Name+"\x00"+a.Host+"\x00"+a.Model+"\x00"+a.Protocol < b.Name+"\x00"+b.Host+"\x00"+b.Model+"\x00"+b.Protocol
	})
	keys := make([]string, 0, len(s.datasets))
	for k := range s.datasets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ri.Datasets = append(ri.Datasets, s.datasets[k])
	}
	return ri
}

// k6Version is the version of k6 this binary was built with.
func K6Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "go.k6.io/k6" {
				return d.Version
			}
		}
	}
	return "unknown"
}
