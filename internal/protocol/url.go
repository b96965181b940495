package protocol

import "strings"

// JoinURL is the URL of a call: the client's base URL and the call's path
// (the protocol's, or the call's own), which may also be a whole URL.
func JoinURL(base, path string) string {
	switch {
	case path == "":
		return base
	case strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://"):
		return path
	case strings.HasPrefix(path, "/"):
		return base + path
	default:
		return base + "/" + path
	}
}
