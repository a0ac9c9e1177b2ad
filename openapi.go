// Package jobboard holds what is generated from proto/ and served as it is:
// go:embed cannot reach gen/ from another directory, and gen/ is rewritten
// whole by buf, so the embedding lives here at the module root.
package jobboard

import _ "embed"

// OpenAPI is the REST API's OpenAPI 2.0 document, generated from proto/ by
// protoc-gen-openapiv2 with proto/jobboard/rest/v2/openapi.yaml.
//
//go:embed gen/openapi/jobboard.swagger.json
var OpenAPI []byte
