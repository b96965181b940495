package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// The late-TTFT warning weighs a window of judged calls as the report's rule
// does: three late in three hundred warn (once per period, shared with the lag
// warning), two do not, late reads and late sends count together, and calls
// that could not be judged do not count.
func TestLateTTFTWarningWeighsAWindow(t *testing.T) {
	t.Parallel()
	log, logs := warningLog()
	w := &LagWarning{}
	window := func(lateReads, lateSends int) {
		for i := range TTFTWindow {
			w.NoteTTFT(log, stream.TTFTUnjudged)
			switch {
			case i < lateReads:
				w.NoteTTFT(log, stream.TTFTReadLate)
			case i < lateReads+lateSends:
				w.NoteTTFT(log, stream.TTFTSentLate)
			default:
				w.NoteTTFT(log, stream.TTFTOnTime)
			}
		}
	}
	window(1, 1)
	require.Empty(t, logs.String(), "two late TTFTs in 300 are no reason to warn")
	window(2, 1)
	require.Contains(t, logs.String(), "of the last 300 calls, 2 read their first token together with the next one")
	require.Contains(t, logs.String(), "and 1 sent their request half a decode step or more late")
	w.Check(log, time.Second)
	require.Equal(t, 1, strings.Count(logs.String(), "level=warn"), logs.String())
}

// warningLog is a logger whose output the test reads.
func warningLog() (*logrus.Logger, *strings.Builder) {
	var logs strings.Builder
	log := logrus.New()
	log.SetOutput(&logs)
	return log, &logs
}

// The lag warning is logged once per period, and not for a small lag.
func TestLagWarningIsRateLimited(t *testing.T) {
	t.Parallel()
	log, logs := warningLog()
	w := &LagWarning{}
	w.Check(log, time.Millisecond)
	require.Empty(t, logs.String(), "a 1 ms lag is no reason to warn")
	w.Check(log, 25*time.Millisecond)
	w.Check(log, 40*time.Millisecond)
	require.Equal(t, 1, strings.Count(logs.String(), "load generator ran"), logs.String())
	require.Contains(t, logs.String(), "25ms late")
}
