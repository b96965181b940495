// Command llmstream works on the run records that report() writes. Its one
// subcommand, merge, combines the records of a test split across k6
// instances (--execution-segment) into the report of the whole test:
//
//	llmstream merge -o merged.json [--html merged.html] [--text] [--title T] [--baseline base.json] a.json b.json …
//
// Counts add exactly and quantiles come from the merged sketches (within
// their 1 % relative accuracy); records of different tests (their
// fingerprints, load shapes, clients or data sets differ), or segments that
// overlap or leave part of the test out, are refused with the reason. A
// record without a fingerprint (an older version's) merges with a warning.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

const usage = `usage: llmstream merge [-o merged.json] [--html merged.html] [--text] [--title TITLE] [--baseline base.json] RECORD.json RECORD.json …

Merges the JSON run records that report() wrote on each k6 instance of one
test (one record per execution segment) into the record of the whole test,
and renders it. Without -o or --html the text report is printed. With
--baseline the merged run is compared with an earlier run record, as report()
does with its baseline option.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a command line that cannot be run (exit code 2, usage printed).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprint(stderr, usage)
		if ue.msg != "" {
			fmt.Fprintln(stderr, "llmstream:", ue.msg)
		}
		return 2
	default:
		fmt.Fprintln(stderr, "llmstream:", err)
		return 1
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{""}
	}
	switch args[0] {
	case "merge":
		return merge(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return usageError{fmt.Sprintf("unknown command %q", args[0])}
	}
}

func merge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the merged run record (JSON) to this file")
	htmlOut := fs.String("html", "", "write the merged HTML report to this file")
	text := fs.Bool("text", false, "print the merged text report")
	title := fs.String("title", "", "title of the HTML report")
	baseline := fs.String("baseline", "", "compare the merged run with this run record")
	// Flags may come before, between or after the files.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		return usageError{"no run records given"}
	}
	recs := make([]*runrecord.Record, 0, len(files))
	for _, f := range files {
		rec, err := readRecord(f)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	merged, err := report.Merge(recs...)
	if err != nil {
		return err
	}
	for _, w := range report.MergeWarnings(recs...) {
		fmt.Fprintln(stderr, "llmstream: warning:", w)
	}
	if *baseline != "" {
		base, err := readRecord(*baseline)
		if err != nil {
			return err
		}
		merged.Comparison = compare.Records(merged, base)
	}
	if *out != "" {
		b, nonFinite, err := runrecord.Encode(merged)
		if err != nil {
			return fmt.Errorf("the merged record: %w", err)
		}
		if note := runrecord.NonFiniteNote(nonFinite); note != "" {
			fmt.Fprintln(stderr, "llmstream: warning:", note)
		}
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil { // #nosec G306 -- a report, not a secret
			return err
		}
	}
	if *htmlOut != "" {
		if err := os.WriteFile(*htmlOut, report.RenderRecordHTML(merged, *title), 0o644); err != nil { // #nosec G306 -- a report
			return err
		}
	}
	if *text || (*out == "" && *htmlOut == "") {
		fmt.Fprint(stdout, report.RenderRecordText(merged))
	}
	return nil
}

// readRecord reads a run record; errors name the file.
func readRecord(path string) (*runrecord.Record, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the user names the files
	if err != nil {
		return nil, err
	}
	return runrecord.ParseRecord(path, data)
}
