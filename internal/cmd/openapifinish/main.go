// Command openapifinish applies to the OpenAPI document protoc-gen-openapiv2
// wrote the rules of the REST API that the generator cannot be told through
// proto/jobboard/rest/v2/openapi.yaml. `make generate` runs it on
// gen/openapi/jobboard.swagger.json after buf generate, and `make
// generate-check` on its own output, so the committed document is always
// what the protos, openapi.yaml and these rules make:
//
//   - An operation that declares a success status other than 200 (201,
//     202, 204) answers only with it: the generator's default 200 goes.
//
//   - A response declared without a schema has no body: the empty schema
//     the generator writes for it ("schema": {}) goes.
//
//   - A nullable member that refers to a message (an endpoint's auth, an
//     import's results) is written allOf that reference: beside a $ref the
//     x-nullable mark would be ignored, and null refused.
//
//   - A schema whose type openapi.yaml overrode from array to one value (a
//     job's employmentType and routeType, of which REST shows the first)
//     loses the items the generator left, and an enum given for it moves
//     from those items to the value.
//
//   - A schema whose type was overridden to object (an event's data) loses
//     the format of the proto type it replaced (bytes' "byte").
//
//   - A property marked x-jobboard-not-on-the-wire (a field the gateway
//     fills, never sent by a client) is removed with the mark.
//
//   - A 64-bit integer is a JSON number, as the REST API writes and reads
//     it, not protobuf JSON's string.
//
// It rewrites the file it is given:
//
//	go run ./internal/cmd/openapifinish gen/openapi/jobboard.swagger.json
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openapifinish FILE (rewritten in place)")
		os.Exit(2)
	}
	if err := finishFile(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "openapifinish:", err)
		os.Exit(1)
	}
}

func finishFile(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	out, err := finish(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return os.WriteFile(name, out, 0o644)
}

// finish applies the rules to a document.
func finish(data []byte) ([]byte, error) {
	tree, err := readTree(data)
	if err != nil {
		return nil, err
	}
	doc, ok := tree.(*object)
	if !ok {
		return nil, fmt.Errorf("the document is not a JSON object")
	}
	if paths := doc.obj("paths"); paths != nil {
		for _, p := range paths.keys {
			item := paths.obj(p)
			if item == nil {
				continue
			}
			for _, method := range item.keys {
				if op := item.obj(method); op != nil {
					dropDefaultSuccess(op)
					dropEmptySchemas(op)
				}
			}
		}
	}
	walkSchemas(doc, finishSchema)
	walkObjects(doc, integersAsNumbers)
	return writeTree(doc)
}

// dropDefaultSuccess removes the generator's 200 from an operation that
// declares another success status.
func dropDefaultSuccess(op *object) {
	responses := op.obj("responses")
	if responses == nil || responses.get("200") == nil {
		return
	}
	for _, code := range responses.keys {
		if code != "200" && len(code) == 3 && code[0] == '2' {
			responses.delete("200")
			return
		}
	}
}

// dropEmptySchemas removes the empty schema of each response declared
// without one.
func dropEmptySchemas(op *object) {
	responses := op.obj("responses")
	if responses == nil {
		return
	}
	for _, code := range responses.keys {
		if r := responses.obj(code); r != nil {
			if s := r.obj("schema"); s != nil && len(s.keys) == 0 {
				r.delete("schema")
			}
		}
	}
}

// integersAsNumbers makes a 64-bit integer, which the generator types as
// protobuf JSON's string, the JSON number the REST API writes and reads
// (the renderer's Int, the path's ids), in a schema or a parameter.
func integersAsNumbers(o *object) {
	if typ, _ := o.get("type").(string); typ != "string" {
		return
	}
	if format, _ := o.get("format").(string); format == "int64" || format == "uint64" {
		o.set("type", "integer")
	}
}

// walkObjects calls f on every object below v, children first.
func walkObjects(v any, f func(*object)) {
	switch v := v.(type) {
	case *object:
		for _, k := range v.keys {
			walkObjects(v.values[k], f)
		}
		f(v)
	case []any:
		for _, e := range v {
			walkObjects(e, f)
		}
	}
}

// notOnTheWire marks a property the service fills itself.
const notOnTheWire = "x-jobboard-not-on-the-wire"

// finishSchema applies the schema rules to one schema object.
func finishSchema(s *object) {
	typ, _ := s.get("type").(string)
	if items := s.obj("items"); items != nil && typ != "" && typ != "array" {
		if enum := items.get("enum"); enum != nil && s.get("enum") == nil {
			s.set("enum", enum)
		}
		s.delete("items")
	}
	if typ == "object" {
		s.delete("format")
	}
	if props := s.obj("properties"); props != nil {
		for _, name := range append([]string(nil), props.keys...) {
			p := props.obj(name)
			switch {
			case p == nil:
			case p.get(notOnTheWire) == true:
				props.delete(name)
				removeRequired(s, name)
			case p.get("$ref") != nil && p.get("x-nullable") == true:
				props.set(name, nullableReference(p))
			}
		}
	}
}

// nullableReference is a property that refers to a message and may be
// null, written so that both hold: the reference inside allOf, the other
// members (description, x-nullable) beside it.
func nullableReference(p *object) *object {
	out := &object{values: map[string]any{}}
	for _, k := range p.keys {
		if k == "$ref" {
			out.set("allOf", []any{&object{keys: []string{"$ref"}, values: map[string]any{"$ref": p.get("$ref")}}})
			continue
		}
		out.set(k, p.get(k))
	}
	return out
}

// removeRequired takes name out of s's required list.
func removeRequired(s *object, name string) {
	required, _ := s.get("required").([]any)
	kept := required[:0]
	for _, r := range required {
		if r != name {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		s.delete("required")
	} else {
		s.set("required", kept)
	}
}

// walkSchemas calls f on every object below v that is a schema: the
// definitions, every property and items of them, and the schemas of
// parameters and responses. Children are visited before their parent, so
// a property is finished before the rules look at it from its object.
func walkSchemas(v any, f func(*object)) {
	switch v := v.(type) {
	case *object:
		for _, k := range v.keys {
			walkSchemas(v.values[k], f)
		}
		if isSchema(v) {
			f(v)
		}
	case []any:
		for _, e := range v {
			walkSchemas(e, f)
		}
	}
}

// isSchema tells a schema object from the document's other objects by
// the members only a schema has.
func isSchema(o *object) bool {
	for _, k := range []string{"type", "properties", "items", "$ref", "allOf"} {
		if o.get(k) != nil {
			// A parameter has a type too, but also "in"; its schema, when
			// it is a body, is a member of its own and visited as one.
			return o.get("in") == nil
		}
	}
	return false
}
