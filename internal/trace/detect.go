package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// detect names the format: the one asked for, else from the first line (a
// JSON object with chat_id is Bailian's, other JSON lines Mooncake's; a CSV
// header with "Response tokens" is BurstGPT's, with ContextTokens Azure's).
func detect(r io.Reader, name, format string) (*bufio.Reader, string, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	skipBOM(br)
	switch format {
	case Mooncake, Bailian, BurstGPT, Azure:
		return br, format, nil
	case "", "auto":
	default:
		return nil, "", &Error{File: name, Reason: fmt.Sprintf(
			"unknown format %q (known: auto, %s, %s, %s, %s)", format, Mooncake, Bailian, BurstGPT, Azure)}
	}
	head, err := br.Peek(4096)
	if len(head) == 0 {
		if err == nil || err == io.EOF {
			return nil, "", &Error{File: name, Reason: "the file is empty"}
		}
		return nil, "", &Error{File: name, Reason: err.Error()}
	}
	first, _, _ := bytes.Cut(bytes.TrimLeft(head, " \t\r\n"), []byte("\n"))
	switch {
	case bytes.HasPrefix(first, []byte("{")):
		if bytes.Contains(first, []byte(`"chat_id"`)) {
			return br, Bailian, nil
		}
		return br, Mooncake, nil
	case strings.Contains(string(first), "Response tokens"):
		return br, BurstGPT, nil
	case strings.Contains(string(first), "ContextTokens"):
		return br, Azure, nil
	}
	return nil, "", &Error{File: name, Line: 1, Reason: "not a trace format this reader knows: expected Mooncake or Bailian " +
		"JSON lines, or a BurstGPT (Timestamp,…,Response tokens,…) or Azure (TIMESTAMP,ContextTokens,GeneratedTokens) CSV " +
		"header; name the format to read it as one"}
}

// bom is UTF-8's byte-order mark, which Windows tools write at the start of
// a text file.
var bom = []byte("\ufeff") //nolint:gochecknoglobals // a constant's bytes

// skipBOM leaves out a byte-order mark at the start of the file, whatever
// its format: a CSV reader and a JSON decoder would each take it for the
// first column's name or an invalid character.
func skipBOM(br *bufio.Reader) {
	if head, _ := br.Peek(len(bom)); bytes.Equal(head, bom) {
		_, _ = br.Discard(len(bom))
	}
}
