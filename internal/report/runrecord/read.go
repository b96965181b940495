package runrecord

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// LoadBaseline reads a run record written by MarshalRecord (or by an older
// version of this module, whose sketches it converts), checking it enough that
// a corrupt or foreign file gives an error, never a panic.
func LoadBaseline(data []byte) (*Record, error) { return ParseRecord("baseline", data) }

// ParseRecord is LoadBaseline with the file's name in every error.
func ParseRecord(name string, data []byte) (*Record, error) {
	var head struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("report: %s is not a JSON run record: %w", name, err)
	}
	if head.Format == nil {
		return nil, fmt.Errorf(`report: %s has no "format" field: not a run record`, name)
	}
	var rec *Record
	var err error
	switch *head.Format {
	case RecordFormat:
		rec = &Record{}
		err = json.Unmarshal(data, rec)
	case recordFormatV1:
		rec, err = parseRecordV1(data)
	default:
		return nil, fmt.Errorf("report: %s is a run record of format %d; this version reads formats %d and %d "+
			"(write it again with a matching version of xk6-llmstream)", name, *head.Format, recordFormatV1, RecordFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("report: %s (record format %d): %w", name, *head.Format, err)
	}
	if err := rec.check(); err != nil {
		return nil, fmt.Errorf("report: %s: %w", name, err)
	}
	rec.Format = RecordFormat // converted, if it was older
	rec.Source = name
	return rec, nil
}

func checkCategories(prefix string, cats map[string]*CategoryRecord) error {
	for cat, cr := range cats {
		if cr == nil {
			return fmt.Errorf("%scategory %q is null", prefix, cat)
		}
		for name, mr := range cr.Metrics {
			if mr == nil || mr.Sketch == nil {
				return fmt.Errorf("%s%s/%s has no sketch", prefix, cat, name)
			}
			if err := mr.Sketch.Validate(); err != nil {
				return fmt.Errorf("%s%s/%s: %w", prefix, cat, name, err)
			}
		}
		for name, vs := range cr.Samples {
			for _, v := range vs {
				if math.IsNaN(v) || v < 0 {
					return fmt.Errorf("%s%s/%s has an invalid sample %v", prefix, cat, name, v)
				}
			}
		}
	}
	return nil
}

// check validates what JSON decoding cannot: every figure a report reads is there and sane.
func (rec *Record) check() error {
	if len(rec.Categories) == 0 {
		return errors.New("record has no categories (was the run empty?)")
	}
	if err := checkCategories("", rec.Categories); err != nil {
		return err
	}
	for name, cl := range rec.Clients {
		if cl == nil {
			return fmt.Errorf("client %q is null", name)
		}
		if err := checkCategories("client "+name+": ", cl.Categories); err != nil {
			return err
		}
	}
	return nil
}
