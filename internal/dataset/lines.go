package dataset

import "bytes"

// eachLine calls fn with every line of data (without its "\n") and its 1-based
// number, so loaders can name the line of a bad record; it stops at fn's first error.
func eachLine(data []byte, fn func(line int, raw []byte) error) error {
	for line := 1; len(data) > 0; line++ {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := fn(line, raw); err != nil {
			return err
		}
	}
	return nil
}
