// Package schedule is the open-model dispatcher: one schedule of credits for
// the whole test, each with the time it is due, handed to whichever VU asks
// next. A VU of a constant-vus pool asks for a credit, sleeps until it is
// due, and sends; when every VU is busy the credit waits for the first free
// one and goes out late, and that lateness is the credit's own figure
// (Credit.Lag), never dropped and never hidden. k6's arrival-rate executors
// drop such an iteration on the spot (dropped_iterations), and every
// percentile then omits the user who would have waited.
//
// Credits are numbered in one global sequence whatever the source (constant,
// Poisson, gamma, a trace's rows), so a test split across k6 instances gives
// each instance its striped share of that sequence (dataset.Share): together
// the instances run exactly the one schedule.
//
// The rate can change while the test runs (SetRate): a source gives each
// credit a position on its own axis (arrivals at unit rate, or a trace's
// seconds), and a piecewise-linear clock maps positions to times at the
// current speed, so a change moves every credit not yet due and none that
// was claimed. Hold stops the clock (speed 0) until the next SetRate: the
// capacity search holds its arrivals while a backlog drains, and a trace
// then goes on from where it stopped. A change is given at an offset from the schedule's start, so
// every instance that applies it computes the same due times.
package schedule
