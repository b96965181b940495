// Package runrecord is the run record: what a report says about one run, as
// the JSON that report() writes, a later run loads as its baseline, and
// `llmstream merge` adds up across k6 instances. It holds the record's types
// (categories of figures with their sketches, stages, waves, clients, routes,
// paired comparisons, findings, the baseline comparison, the capacity,
// dispatch, retrieval, image and conversation sections, how the run was
// made) and the reading of a record file (format 1 converted, every figure
// checked).
//
// It sits under everything else of the report: collecting a run, diagnosing
// it, comparing it with a baseline, merging instances and rendering all
// produce or read these types, and none of them is imported here, so the
// record is one model that every stage of the report shares. It imports only
// what it stores: the sketch, the servers' own view (internal/servermetrics)
// and the figure table (internal/record), whose rows name the distributions
// a category keeps (record.Dists: the keys of its metrics).
package runrecord
