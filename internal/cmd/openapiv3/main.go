// Command openapiv3 writes the OpenAPI 3.0 form of the REST API's OpenAPI
// 2.0 document, converted by kin-openapi, for tools that read only 3.0:
// `make generate` feeds it to oapi-codegen, which makes the Go client of
// gen/openapiclient that the gateway's tests call every operation with.
//
//	go run ./internal/cmd/openapiv3 gen/openapi/jobboard.swagger.json gen/openapi/jobboard.openapi3.json
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/truckjobs/jobboard/internal/openapiv3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: openapiv3 OPENAPI2-FILE OPENAPI3-FILE")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "openapiv3:", err)
		os.Exit(1)
	}
}

func convert(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	v3, err := openapiv3.FromV2(data)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	out, err := json.MarshalIndent(v3, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(to, append(out, '\n'), 0o644)
}
