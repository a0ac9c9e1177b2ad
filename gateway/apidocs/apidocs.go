// Package apidocs serves the REST API's reference: the OpenAPI document at
// /openapi.json and, at /docs, Swagger UI over it, where an employer can
// paste a key and try calls against this server.
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/truckjobs/jobboard"
)

// The Swagger UI release is installed by scripts/fetch-swagger-ui.sh (make
// does it before building); a build without it fails here, on purpose.
//
//go:embed swagger-ui/swagger-ui-bundle.js swagger-ui/swagger-ui.css swagger-ui/favicon-32x32.png swagger-ui/LICENSE
var swaggerUI embed.FS

//go:embed page/index.html page/init.js
var page embed.FS

// Routes adds GET /openapi.json, /docs and the page's assets to mux.
func Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(jobboard.OpenAPI)
	})
	assets, _ := fs.Sub(swaggerUI, "swagger-ui")
	pageFiles, _ := fs.Sub(page, "page")
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, pageFiles, "index.html")
	})
	mux.HandleFunc("GET /docs/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/docs/" {
			http.Redirect(w, r, "/docs", http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("GET /docs/init.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, pageFiles, "init.js")
	})
	mux.Handle("GET /docs/assets/", http.StripPrefix("/docs/assets/", http.FileServerFS(assets)))
}
