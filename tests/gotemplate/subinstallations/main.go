// The expectations of the golden cases whose blueprints template their subinstallations
// (tests/fixtures/imports/*subinst*, landscaper-examples-installation-template): real Go
// text/template with Sprig, run as Landscaper's GoTemplate executor runs a template
// (missingkey=zero, Sprig without env and expandenv, toYaml and fromYaml over sigs.k8s.io/yaml,
// numbers decoded from JSON as float64), chained the way Landscaper chains a blueprint's
// subinstallation execution to its subinstallations' deploy executions. Test tooling, not
// product. Built from Debian's packages without modules (Go 1.19.8, golang-github-masterminds-
// sprig-dev, golang-sigs-k8s-io-yaml-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o subinst tests/gotemplate/subinstallations/main.go
//	./subinst CASE.json
//
// CASE.json: {"execution": file of the subinstallation execution, "data": its data (imports, cd,
// components), "blueprints": {ref → directory of the child blueprint}}. For each installation
// template the execution writes, the child's imports are built as Landscaper's import
// constructor builds them: `imports.data` by dataRef and `imports.targets` (`target: name` or
// `name[key]`) from the parent's imports, then `importDataMappings` (constants only: a Spiff
// expression stops the tool). Each deploy execution of the child's blueprint.yaml is rendered
// over {imports, cd, components, state: {}}; the tool prints, for each child in order, its name,
// its imports and each deploy execution's text.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

type input struct {
	Execution  string                 `json:"execution"`
	Data       map[string]interface{} `json:"data"`
	Blueprints map[string]string      `json:"blueprints"`
}

func funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = func(v interface{}) string {
		out, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(out), "\n")
	}
	f["fromYaml"] = func(s string) (interface{}, error) {
		var v interface{}
		err := yaml.Unmarshal([]byte(s), &v)
		return v, err
	}
	return f
}

func render(file string, data interface{}) string {
	src, err := os.ReadFile(file)
	check(err)
	t, err := template.New("execution").Funcs(funcs()).Option("missingkey=zero").Parse(string(src))
	check(err)
	var out bytes.Buffer
	check(t.Execute(&out, data))
	if strings.Contains(out.String(), "<no value>") {
		check(fmt.Errorf("%s: the rendered template contains <no value>", file))
	}
	return out.String()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// element is a parent import, or `name[key]` of a targetMap/targetList one.
func element(imports map[string]interface{}, ref string) interface{} {
	if i := strings.LastIndex(ref, "["); i > 0 && strings.HasSuffix(ref, "]") {
		key := ref[i+1 : len(ref)-1]
		switch c := imports[ref[:i]].(type) {
		case map[string]interface{}:
			return c[key]
		case []interface{}:
			var n int
			fmt.Sscanf(key, "%d", &n)
			return c[n]
		}
		check(fmt.Errorf("%s names no element", ref))
	}
	return imports[ref]
}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	check(err)
	var in input
	check(json.Unmarshal(raw, &in))
	base := filepath.Dir(os.Args[1])
	// Round-trip the data through JSON, as Landscaper hands imports to templates.
	buf, _ := json.Marshal(in.Data)
	var data map[string]interface{}
	check(json.Unmarshal(buf, &data))
	text := render(filepath.Join(base, in.Execution), data)
	var output struct {
		Subinstallations []map[string]interface{} `json:"subinstallations"`
	}
	check(yaml.Unmarshal([]byte(text), &output))
	parent, _ := data["imports"].(map[string]interface{})
	for _, tmpl := range output.Subinstallations {
		imports := map[string]interface{}{}
		wiring, _ := tmpl["imports"].(map[string]interface{})
		for _, d := range asList(wiring["data"]) {
			imports[d["name"].(string)] = parent[d["dataRef"].(string)]
		}
		for _, t := range asList(wiring["targets"]) {
			imports[t["name"].(string)] = element(parent, t["target"].(string))
		}
		mappings, _ := tmpl["importDataMappings"].(map[string]interface{})
		for k, v := range mappings {
			if s, ok := v.(string); ok && strings.Contains(s, "((") {
				check(fmt.Errorf("%s: a Spiff expression; this tool takes constants", s))
			}
			imports[k] = v
		}
		bp, _ := tmpl["blueprint"].(map[string]interface{})
		dir, ok := in.Blueprints[fmt.Sprint(bp["ref"])]
		if !ok {
			check(fmt.Errorf("no directory for blueprint %v", bp["ref"]))
		}
		dir = filepath.Join(base, dir)
		bpText, err := os.ReadFile(filepath.Join(dir, "blueprint.yaml"))
		check(err)
		var blueprint struct {
			DeployExecutions []struct {
				File string `json:"file"`
			} `json:"deployExecutions"`
		}
		check(yaml.Unmarshal(bpText, &blueprint))
		buf, _ := json.Marshal(imports)
		var childImports map[string]interface{}
		check(json.Unmarshal(buf, &childImports))
		shown, _ := json.Marshal(childImports)
		fmt.Printf("# subinstallation %v\n# imports: %s\n", tmpl["name"], shown)
		childData := map[string]interface{}{"imports": childImports, "cd": data["cd"], "components": data["components"], "state": map[string]interface{}{}}
		for _, exec := range blueprint.DeployExecutions {
			fmt.Print(render(filepath.Join(dir, exec.File), childData))
			fmt.Println("\n---")
		}
	}
}

func asList(v interface{}) []map[string]interface{} {
	list, _ := v.([]interface{})
	out := make([]map[string]interface{}, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]interface{}); ok {
			out = append(out, m)
		}
	}
	return out
}
