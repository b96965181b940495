package load

// Schedule.trace: a production trace replayed through a schedule, read once
// per process (trace_file.go opens the file) into internal/trace's rows,
// its prompts built to each row's lengths when their credit is claimed.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/grafana/sobek"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
	"github.com/llmstream/xk6-llmstream/internal/trace"
)

// trace is Schedule.trace(path, options): read once per process, through
// k6's init file system (so `k6 archive` carries the file) or, fromDisk,
// streamed from the disk (trace_file.go).
func (sf ScheduleFactory) Trace(path string, opts sobek.Value) (*jsSchedule, error) {
	env := sf.VU.InitEnv()
	if env == nil {
		return nil, errors.New("Schedule.trace must be called in the init context (outside the default function)")
	}
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("Schedule.trace: a file path is required")
	}
	var o traceOptions
	if err := k6env.DecodeOptions(opts, "Schedule.trace options", &o); err != nil {
		return nil, err
	}
	if o.Loop != (o.LoopFor > 0) {
		return nil, errors.New("Schedule.trace: loop and loopFor go together (loop: true, loopFor: '10m')")
	}
	key := path
	if env.CWD != nil {
		key = fsext.Abs(env.CWD.Path, strings.TrimPrefix(path, "file://"))
	}
	ss, err := dataset.Shared(sf.Store, k6env.StoreKey("schedule-trace", key, o), func() (*sharedSchedule, error) {
		f, size, err := openTrace(env, path, o.FromDisk)
		if err != nil {
			return nil, err
		}
		defer f.Close()        //nolint:errcheck // read only
		digest := sha256.New() // the trace's identity for the run record, as it is read: no second pass
		tr, err := trace.Read(io.TeeReader(f, digest), path, o.Options)
		if err != nil {
			return nil, err //nolint:wrapcheck // trace.Error names the file and line
		}
		if sf.Info != nil {
			sf.Info.RegisterTrace(k6env.StoreKey("schedule-trace", key, o), path, opts, tr.Rows(), hex.EncodeToString(digest.Sum(nil)))
		}
		if size >= bigTraceFile && !o.FromDisk && env.Logger != nil {
			env.Logger.Infof("llmstream: k6 keeps the %.0f MB text of trace %s in memory for the whole run, as it does "+
				"for every file the init context reads (for `k6 archive`); fromDisk: true reads it without that copy "+
				"(the trace then takes %.1f MB), but no archive carries it", float64(size)/(1<<20), path,
				float64(tr.Bytes())/(1<<20))
		}
		tk, err := tokenizer.Get(o.Tokenizer)
		if err != nil {
			return nil, err //nolint:wrapcheck // names the tokenizer
		}
		prompts, err := trace.NewPrompts(tr, tk, o.Seed)
		if err != nil {
			return nil, err //nolint:wrapcheck // says why
		}
		times := schedule.Times{Len: tr.Rows(), Span: tr.Span(), From: tr.OffsetsFrom}
		s, err := schedule.Offsets(times, o.Loop, schedule.Options{Rate: o.RateScale, Duration: o.LoopFor})
		if err != nil {
			return nil, err //nolint:wrapcheck // names the option
		}
		shared := &sharedSchedule{Name: path, whole: s, Tr: tr, prompts: prompts, topt: o}
		if r, ok := tr.Reuse(); ok {
			shared.Reuse = r
		}
		sf.List.add(shared)
		if env.Logger != nil {
			env.Logger.Infof("llmstream: %s", TraceSummary(shared))
		}
		return shared, nil
	})
	if err != nil {
		return nil, fmt.Errorf("Schedule.trace: %w", err)
	}
	return &jsSchedule{s: ss, scope: sf.Scope, due: sf.Due, vu: sf.VU, metrics: sf.Metrics}, nil
}
