// Package compare sets a run record against a baseline record: the client's
// percentiles with bootstrap intervals, the servers' own figures, the
// capacity search's answer and the jobs' times. It reads records only, never
// a live run, so a run just collected and a merged one (`llmstream merge`) are
// compared the same way; Records is the entry point, and the others are the
// parts it adds up, for a report that compares one section on its own.
package compare
