// Flux's post-build substitution of one object, as fluxcd/pkg kustomize.SubstituteVariables
// does it: the object as kustomize holds it (yaml.v3) to JSON, to YAML text (sigs.k8s.io/yaml),
// envsubst, back to JSON. Usage: varsub STRICT VARS.json < object.yaml; prints JSON or the error
// (the text before and after substitution on stderr).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/fluxcd/pkg/envsubst"
	yaml3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

func main() {
	strict := os.Args[1] == "true"
	var vars map[string]string
	raw, _ := os.ReadFile(os.Args[2])
	if err := json.Unmarshal(raw, &vars); err != nil {
		fmt.Println("vars:", err)
		os.Exit(2)
	}
	in, _ := io.ReadAll(os.Stdin)
	m := map[string]interface{}{}
	if err := yaml3.Unmarshal(in, &m); err != nil {
		fmt.Println("input:", err)
		os.Exit(2)
	}
	j, _ := json.Marshal(m)
	text, err := yaml.JSONToYAML(j)
	if err != nil {
		fmt.Println("JSONToYAML:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "--- text\n%s", text)
	out, err := envsubst.Eval(string(text), func(s string) (string, bool) {
		if strict {
			v, ok := vars[s]
			return v, ok
		}
		return vars[s], true
	})
	if err != nil {
		fmt.Println("envsubst error: variable substitution failed:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "--- substituted\n%s", out)
	js, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		fmt.Println("envsubst error: YAMLToJSON:", err)
		os.Exit(1)
	}
	fmt.Println(string(js))
}
