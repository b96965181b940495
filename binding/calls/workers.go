package calls

// The goroutines calls run on. A call's goroutine grows its stack to the
// depth of k6's HTTP client under the stream's parser, and Go copies the
// stack at every doubling: with short answers that copying is a large share
// of a call's own work. A goroutine that has run a call keeps its stack, so
// the next call runs on it when one is idle.

import "time"

// workerIdle is how long a goroutine waits for the next call before it ends:
// long enough to carry a closed loop's next call, short enough that none is
// left once the test's calls stop.
const workerIdle = 200 * time.Millisecond

// workers hands calls to idle goroutines, or starts one. One is shared by
// every VU of the process.
type Workers struct {
	idle chan task // unbuffered: a send succeeds only when a goroutine waits
}

// task is what a worker runs: a launched call (chat.go) or a function.
type task interface{ run() }

// taskFunc is a function as a task.
type taskFunc func()

func (f taskFunc) run() { f() }

func NewWorkers() *Workers { return &Workers{idle: make(chan task)} }

// run runs f on an idle goroutine, or on a new one when none waits. Like a
// go statement, it does not wait for f.
func (w *Workers) run(f func()) { w.runTask(taskFunc(f)) }

// runTask is run for a task.
func (w *Workers) runTask(f task) {
	select {
	case w.idle <- f:
	default:
		go w.work(f)
	}
}

func (w *Workers) work(f task) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f.run()
		t.Reset(workerIdle)
		select {
		case f = <-w.idle:
		case <-t.C:
			return
		}
	}
}
