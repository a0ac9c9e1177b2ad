package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestFinish: each rule on a small document, and a document none applies
// to comes back byte for byte.
func TestFinish(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"another success status drops the default 200",
			`{"paths": {"/a": {"post": {"responses": {"200": {"description": "x"}, "201": {"description": "made"}, "400": {}}}}}}`,
			`{"paths": {"/a": {"post": {"responses": {"201": {"description": "made"}, "400": {}}}}}}`},
		{"an empty response schema goes",
			`{"paths": {"/a": {"delete": {"responses": {"204": {"description": "gone", "schema": {}}, "404": {"schema": {"$ref": "#/e"}}}}}}}`,
			`{"paths": {"/a": {"delete": {"responses": {"204": {"description": "gone"}, "404": {"schema": {"$ref": "#/e"}}}}}}}`},
		{"a nullable reference is written allOf it",
			`{"definitions": {"W": {"type": "object", "properties": {"auth": {"$ref": "#/definitions/A", "description": "d", "x-nullable": true}, "links": {"$ref": "#/definitions/L"}}}}}`,
			`{"definitions": {"W": {"type": "object", "properties": {"auth": {"allOf": [{"$ref": "#/definitions/A"}], "description": "d", "x-nullable": true}, "links": {"$ref": "#/definitions/L"}}}}}`},
		{"200 alone stays",
			`{"paths": {"/a": {"get": {"responses": {"200": {"description": "x"}, "404": {}}}}}}`,
			`{"paths": {"/a": {"get": {"responses": {"200": {"description": "x"}, "404": {}}}}}}`},
		{"a value overridden from a list loses its items, keeping their enum",
			`{"definitions": {"Job": {"type": "object", "properties": {"routeType": {"type": "string", "items": {"type": "string", "enum": ["A", "B"]}}}}}}`,
			`{"definitions": {"Job": {"type": "object", "properties": {"routeType": {"type": "string", "enum": ["A", "B"]}}}}}`},
		{"a list keeps its items",
			`{"definitions": {"Job": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}}}`,
			`{"definitions": {"Job": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}}}`},
		{"an object loses a format",
			`{"definitions": {"Event": {"type": "object", "properties": {"data": {"type": "object", "format": "byte"}}}}}`,
			`{"definitions": {"Event": {"type": "object", "properties": {"data": {"type": "object"}}}}}`},
		{"a property not on the wire goes, from required too",
			`{"definitions": {"In": {"type": "object", "properties": {"a": {"type": "string"}, "x": {"type": "array", "x-jobboard-not-on-the-wire": true}}, "required": ["a", "x"]}}}`,
			`{"definitions": {"In": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}}`},
		{"a parameter's type is not a schema's",
			`{"paths": {"/a": {"get": {"parameters": [{"name": "p", "in": "query", "type": "object", "format": "byte"}], "responses": {}}}}}`,
			`{"paths": {"/a": {"get": {"parameters": [{"name": "p", "in": "query", "type": "object", "format": "byte"}], "responses": {}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := finish([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %s\nwant %s", out, tt.want)
			}
		})
	}
	// The generator's own formatting, member order included, is kept.
	doc := "{\n  \"swagger\": \"2.0\",\n  \"info\": {\n    \"title\": \"a \\u003cb\\u003e\",\n    \"version\": \"2.0\"\n  },\n  \"paths\": {}\n}\n"
	out, err := finish([]byte(doc))
	if err != nil || string(out) != doc {
		t.Errorf("a document without anything to finish changed (%v):\n%s", err, out)
	}
}
