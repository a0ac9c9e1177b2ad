package gateway

import (
	"net/http"
	"strings"
)

// RefuseUncleanPaths answers a path with an empty or dot segment (//, /./,
// /../) with the 404 of an unknown path (docs/api.md, Errors) before next
// sees it. Go's ServeMux would redirect such a path to its cleaned form
// with an HTML body; no resource of the API has such a path, and a client
// that built one has a bug a redirect would hide.
func RefuseUncleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if uncleanPath(r.URL.Path) {
			writeError(w, r, errNotFoundPath)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// uncleanPath reports a path with an empty, "." or ".." segment; a
// trailing slash (an empty last segment) is not one.
func uncleanPath(path string) bool {
	if !strings.HasPrefix(path, "/") {
		return path != "*" // OPTIONS *, the one path without a slash
	}
	for rest := path[1:]; ; {
		seg, after, more := strings.Cut(rest, "/")
		if !more {
			return seg == "." || seg == ".."
		}
		if seg == "" || seg == "." || seg == ".." {
			return true
		}
		rest = after
	}
}

// headAsGet answers HEAD on every GET resource as GET would, without the
// body: the request goes on as a GET, and the server, which knows the
// request was a HEAD, sends the status and the headers (Content-Length when
// the GET would send one) and drops the body. The access log and the
// metrics, outside, still see the HEAD.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			get := *r
			get.Method = http.MethodGet
			r = &get
		}
		next.ServeHTTP(w, r)
	})
}
