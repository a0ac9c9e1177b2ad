// Package openapiv3 turns the REST API's OpenAPI 2.0 document into OpenAPI
// 3.0, the form tools that read only 3.0 take (oapi-codegen) and the one
// kin-openapi validates answers against. Both the committed 3.0 document
// (internal/cmd/openapiv3) and the tests' answer checks
// (internal/openapicheck) come from this one conversion.
package openapiv3

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// FromV2 converts an OpenAPI 2.0 document, refusing a result that is not
// valid OpenAPI 3.
func FromV2(data []byte) (*openapi3.T, error) {
	var v2 openapi2.T
	if err := json.Unmarshal(data, &v2); err != nil {
		return nil, fmt.Errorf("read the OpenAPI 2 document: %w", err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, fmt.Errorf("convert it to OpenAPI 3: %w", err)
	}
	if err := v3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the converted document is not valid OpenAPI 3: %w", err)
	}
	return v3, nil
}
