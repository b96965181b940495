// Package capacity is the capacity search: the highest load a service takes
// while every objective (TTFT, TPOT, E2E percentiles, error rate) holds,
// found within one test by changing the load window by window. It knows
// nothing of k6: the binding feeds it the calls' records and the claims of
// the load it drives, calls Advance with the clock, and applies the level it
// returns (a schedule's rate, or a concurrency gate).
//
// # The levels
//
// The first window runs at the range's minimum; while a window passes the
// next runs at twice its level (capped at the maximum): bracketing. A failing
// first window ends the search with "capacity below min". Once a pass and a
// fail bracket the boundary, each window runs at the geometric middle of the
// bracket (bisection in log space) until the bracket is narrower than the
// precision (relative to its low end); then the highest passing level runs
// a sustain window (several windows long) before it is given as the answer,
// and a passing maximum too before "above max". A sustain window's verdict
// is its level's (the shorter windows there are set aside): they started
// from the previous level's queue, which near the boundary relaxes over
// longer than a window. Its fail makes the level a fail and the search goes
// on below.
//
// Bisection, not a fitted root: near a capacity the margins are not smooth.
// Past the boundary a queue grows for as long as the window lasts, the
// window is stopped early and its figures are lower bounds, so a margin
// curve interpolated through them (PCHIP or regula falsi) puts its root at
// an arbitrary place and can converge slower than halving. What noise the
// search does guard against is a window whose verdict contradicts its
// neighbours: every verdict is read from an isotonic (pool-adjacent-
// violators) fit of all windows' margins against the level, each margin
// clipped to [-1, 1] and agreeing in sign with its window's verdict, so a
// lucky pass above a fail is pooled with its neighbours instead of steering
// the search alone.
//
// # A window's verdict
//
// Each objective is judged by one-sided 95 % bounds from the window's calls
// (bound.go): a percentile by order statistics (internal/quantile:
// distribution-free), an error rate by Clopper–Pearson. The window passes
// when every objective's upper bound is within its limit, fails when some
// lower bound is past it, and otherwise goes on: its measured span is
// lengthened by half a window at a time, up to the longest window
// (maxWindow), and a window still undecided then fails as undecided (never
// a pass), which the answer reports as a level that may yet hold. With the
// default maxWindow a window whose calls lean to a pass (the share past
// each undecided objective's limit under the share a pass allows) goes on
// past it, up to four times: near a capacity under random arrivals that
// share is close to the limit's tail and its calls come in runs, so a
// level under the capacity needs many times the calls a pass needs. A p95
// thus passes only from 59 calls all within the limit, a p99 or an error
// rate under 1 % from 299.
//
// Calls in a queue are not independent: a burst of arrivals delays several
// calls in a row. The bounds count the calls past a limit in runs (calls in
// send order, at most three calls within the limit apart), a run of k as
// one event of weight k, and shrink the sample to n·Σk/Σk² effective calls
// (the count's variance is that much over a binomial's). A window of a few
// of the queue's relaxation times underestimates this; the sustain window
// is the guard there. Under bursty arrivals (cv above 1) the sample shrinks
// by cv² at least (Config.Burstiness), whether or not the window caught a
// burst, and the default longest window grows by as much.
//
// # A window
//
// A window's first part (warm-up) carries the load but is left out of its
// figures: it is the transient of the level change. Every call sent after
// it up to the window's end is judged, the last-sent ones too: at the end
// the load goes on at the window's level while those calls finish (its
// tail, up to twice the longest limit or call seen), so they finish under
// the load they were sent into. A call still in flight when the window is
// judged is censored: its E2E is at least its age, its TTFT unknown (the
// search hears of a call when it ends); each bound counts it on the
// unfavourable side. A failed call is censored likewise (it never
// completed), and counts as an error.
//
// Random arrivals come at their rate only on average; a pass whose calls
// came more than one standard deviation under its level speaks for the rate
// they came at (the window's "carried" rate), and the levels read it there.
//
// Percentiles for the record are read from per-window DDSketches
// (sketch.Sketch), which merge exactly; they are never averaged.
//
// # Over-saturation
//
// Checked on a one-second grid inside each window (not a sustain window),
// after its warm-up and a quarter of the window: the window fails early
// when TTFT rises significantly (an ordinary least-squares slope, one-sided
// t-test at 99 %, rising by at least half its fitted starting value over the
// span, and past twice the tightest TTFT limit) together with one sign of a
// growing queue: calls in flight, the lateness of the credits the schedule
// hands out, or the server's waiting count when it is read, at every check
// for a tenth of the window. A burst of random arrivals raises all of these
// for a few seconds below the capacity; a queue growing for good keeps
// them rising. A figure still trending at the end of a window that passed
// keeps it undecided (lengthened, and at its longest a fail as "not
// settled").
//
// # Several k6 instances
//
// k6 instances do not talk to each other, so no instance can wait for
// another's figures. Each instance runs its share of every level (its
// stripe of the schedule's credits, or of the concurrency slots) on windows
// counted from the test's start, which k6 starts together on every
// instance, and each decides from its own share's calls with the same code.
// Every decision is a function of the windows' figures only, so instances
// that measure alike take the same decisions and stay on the same windows.
// The limit: a share sees fewer calls, so near the boundary two instances
// can read one window differently; then their staircases part. This is not
// hidden: each instance's record carries its own windows and levels, so
// the difference shows when the records are compared.
// Give each instance enough calls per window (a longer window) to make that
// rare.
package capacity
