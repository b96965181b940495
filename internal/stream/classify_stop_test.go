package stream

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// A call cut by its caller's context is canceled, whether the context was
// cancelled (Ctrl-C, test.abort()) or reached a deadline (k6 ends a
// scenario's VUs at their graceful stop with one); the call's own timeouts
// keep their class.
func TestTheCallersEndIsCanceledNotATimeout(t *testing.T) {
	read := errors.New("read: context deadline exceeded")
	require.Equal(t, ErrCanceled, Classify(context.DeadlineExceeded, context.DeadlineExceeded))
	require.Equal(t, ErrCanceled, Classify(read, context.Canceled))
	require.Equal(t, ErrTimeoutTotal, Classify(context.DeadlineExceeded, CauseFor(ErrTimeoutTotal)))
	require.Equal(t, ErrTimeoutIdle, Classify(read, CauseFor(ErrTimeoutIdle)))
	require.Equal(t, ErrTimeoutTotal, Classify(context.DeadlineExceeded, nil), "no cause: the error's own text")
}
