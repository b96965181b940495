package protocol

import "strings"

// JoinURL is the URL of a call: the client's base URL and the call's path
// (the protocol's, or the call's own), which may also be a whole URL.
//
// A base URL may carry a query (Azure's ?api-version=, Gemini's ?key=): the
// path joins the base's path, before its query, and the query stays on the
// request, ahead of the path's own (Gemini's ?alt=sse). A fragment is never
// sent, so the base's is dropped.
func JoinURL(base, path string) string {
	switch {
	case path == "":
		return base
	case strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://"):
		return path
	}
	base, _, _ = strings.Cut(base, "#")
	basePath, baseQuery, _ := strings.Cut(base, "?")
	path, pathQuery, _ := strings.Cut(path, "?")
	u := strings.TrimRight(basePath, "/") + "/" + strings.TrimLeft(path, "/")
	switch {
	case baseQuery != "" && pathQuery != "":
		return u + "?" + baseQuery + "&" + pathQuery
	case baseQuery != "":
		return u + "?" + baseQuery
	case pathQuery != "":
		return u + "?" + pathQuery
	}
	return u
}
