package stream

import (
	"fmt"
	"net/http"
	"strings"
)

// Every call asks for an uncompressed answer (Accept-Encoding: identity): a
// decompressor releases events only as its blocks fill, which batches them
// and bends every gap, and it hides the body's size. Go's transport
// decompresses by itself only when it asked for gzip on its own, so a server
// that compresses anyway hands the call bytes no protocol can frame. Such an
// answer is not decoded behind the client's back (its timing would not be
// the server's stream): it fails as a decode error that names the encoding,
// rather than reading as an answer cut short.

// UnaskedEncoding is the Content-Encoding a response was compressed with
// although the request asked for identity ("" when it was not).
func UnaskedEncoding(h http.Header) string {
	ce := strings.TrimSpace(h.Get("Content-Encoding"))
	if ce == "" || strings.EqualFold(ce, "identity") {
		return ""
	}
	return ce
}

// UnaskedEncodingMessage is the decode error's message for an answer
// compressed with ce.
func UnaskedEncodingMessage(ce string, status int) string {
	return fmt.Sprintf("the server compressed the answer (Content-Encoding: %s, HTTP %d) although the request asked for "+
		"identity: a compressed answer is not read (decompressing it would batch a stream's events and hide the body's size); "+
		"turn compression off on the server or the proxy in front of it", ce, status)
}
