// Added to a copy of Go's text/template package by tests/gotemplate/port/port: writes the
// execTests table (exec_test.go) as differential cases to $PORT_OUT, each case's data as JSON (a
// struct as its exported fields that JSON can hold; functions, channels and complex numbers left out).
package template

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

func jsonable(v reflect.Value, depth int) (interface{}, bool) {
	if depth > 20 || !v.IsValid() {
		return nil, true
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return jsonable(v.Elem(), depth+1)
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint(), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	case reflect.String:
		return v.String(), true
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil, true
		}
		out := []interface{}{}
		for i := 0; i < v.Len(); i++ {
			item, ok := jsonable(v.Index(i), depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, item)
		}
		return out, true
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		out := map[string]interface{}{}
		iter := v.MapRange()
		for iter.Next() {
			item, ok := jsonable(iter.Value(), depth+1)
			if !ok {
				return nil, false
			}
			out[iter.Key().String()] = item
		}
		return out, true
	case reflect.Struct:
		out := map[string]interface{}{}
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if item, ok := jsonable(v.Field(i), depth+1); ok {
				out[v.Type().Field(i).Name] = item
			}
		}
		return out, true
	}
	return nil, false
}

func TestDumpExecTests(t *testing.T) {
	type Case struct {
		ID   string      `json:"id"`
		Src  string      `json:"src"`
		Data interface{} `json:"data"`
	}
	var cases []Case
	for _, test := range execTests {
		data, ok := jsonable(reflect.ValueOf(test.data), 0)
		if !ok {
			continue
		}
		cases = append(cases, Case{ID: "exec/" + test.name, Src: test.input, Data: data})
	}
	out, err := os.Create(os.Getenv("PORT_OUT"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(cases); err != nil {
		t.Fatal(err)
	}
}
