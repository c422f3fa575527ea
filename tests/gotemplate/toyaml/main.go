// What Landscaper's toYaml writes: sigs.k8s.io/yaml's Marshal (JSON, then gopkg.in/yaml.v2) of
// each value, for tests/toyaml_vs_go.rs. Test tooling, not product. Reads JSON values, one a
// line, on stdin; prints [value, Go's YAML] a line. Built from Debian's packages without
// modules (Go 1.19.8; golang-sigs-k8s-io-yaml-dev, golang-gopkg-yaml.v2-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o toyaml tests/gotemplate/toyaml/main.go
//	./toyaml < strings.jsonl > tests/data/toyaml-go.jsonl   (each string as {"v": string})
//	./toyaml < values.jsonl > tests/data/toyaml-go-values.jsonl
//
// The inputs are the first columns of the two files.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v interface{}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			panic(err)
		}
		out, err := yaml.Marshal(v)
		if err != nil {
			panic(err)
		}
		b, _ := json.Marshal([]interface{}{v, string(out)})
		fmt.Println(string(b))
	}
}
