package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// object is a JSON object that keeps its members in the order they were
// read, so that the finished document lists paths, operations and
// properties as the generator wrote them (preserve_rpc_order) and its diff
// shows only what a rule changed.
type object struct {
	keys   []string
	values map[string]any
}

// get returns the member name, or nil.
func (o *object) get(name string) any { return o.values[name] }

// obj returns the member name when it is an object, or nil.
func (o *object) obj(name string) *object {
	v, _ := o.values[name].(*object)
	return v
}

// delete removes the member name, if there is one.
func (o *object) delete(name string) {
	if _, ok := o.values[name]; !ok {
		return
	}
	delete(o.values, name)
	for i, k := range o.keys {
		if k == name {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

// set sets the member name, adding it last when it is new.
func (o *object) set(name string, v any) {
	if _, ok := o.values[name]; !ok {
		o.keys = append(o.keys, name)
	}
	o.values[name] = v
}

// MarshalJSON writes the members in order; json.MarshalIndent indents it.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// readTree reads one JSON document: objects as *object, arrays as []any,
// numbers as json.Number (written back as they were), and strings, bools
// and null as encoding/json decodes them.
func readTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{values: map[string]any{}}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, ok := key.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v", key)
			}
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(name, v)
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ]
		return list, err
	}
	return tok, nil
}

// writeTree writes v as protoc-gen-openapiv2 writes its documents:
// indented by two spaces, with a final newline.
func writeTree(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
