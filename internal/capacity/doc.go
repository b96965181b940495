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
// first window ends the search with "capacity below min", a passing maximum
// with "above max". Once a pass and a fail bracket the boundary, each window
// runs at the geometric middle of the bracket (bisection in log space) until
// the bracket is narrower than the precision (relative to its low end); then
// the highest passing level runs once more to confirm it.
//
// Bisection, not a fitted root: near a capacity the margins are not smooth.
// Past the boundary a queue grows for as long as the window lasts, the
// window is stopped early and its figures are lower bounds, so a margin
// curve interpolated through them (PCHIP or regula falsi) puts its root at
// an arbitrary place and can converge slower than halving. What noise the
// search does guard against is a window whose verdict contradicts its
// neighbours: every verdict is read from an isotonic (pool-adjacent-
// violators) fit of all windows' margins against the level, each margin
// clipped to [-1, 1], so a lucky pass above a fail, or a confirmation that
// fails, is pooled with its neighbours instead of steering the search alone.
// The confirmation window is that guard made explicit.
//
// # A window
//
// A window's first part (warm-up) carries the load but is left out of its
// figures: the queue of the previous level drains or fills there. Its calls
// are placed by the time they were due (open model) or claimed their slot
// (closed model). At the window's end the calls sent in its last stretch
// (twice as long as the longest call finished so far, at most a third of the
// measured span) are left out too, since only their fast ones could have
// finished; every measured call still in flight is counted in E2E with its
// age as a lower bound (the slow tail is never dropped, which would flatter
// an overload).
//
// Percentiles are read from per-window DDSketches (sketch.Sketch), which
// merge exactly; they are never averaged.
//
// # Over-saturation
//
// Checked on a one-second grid inside each window, after its warm-up and a
// quarter of the window: the window fails early when TTFT rises
// significantly (an ordinary least-squares slope, one-sided t-test at 99 %,
// rising by at least half its fitted starting value over the span) together
// with one sign of a growing queue: calls in flight, the lateness of the
// credits the schedule hands out, or the server's waiting count when it is
// read. Nothing compares TTFT with a fixed floor, so a fast model's
// overload is caught as well as a slow one's. A closed model's queue is
// bounded by its concurrency, so there TTFT alone cannot stop a window; a
// figure still trending at the end (TTFT on its way past its limit) lengthens
// the window once by half, and a window still not settled then fails ("not
// settled"): it is never trusted as a pass. Too few calls lengthen it up to
// twice.
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
