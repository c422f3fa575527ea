// The KOTS oracle: renders templates with replicatedhq/kots's own pkg/template (Builder,
// config, static, license, kURL, version and identity contexts), built by build.sh in a scratch
// GOPATH with the cluster, registry and license parts stubbed (stubs/). Written for this
// project (render-blueprint); KOTS itself is Apache-2.0 and is never copied into the repository.
//
// Input (stdin, JSON):
//
//	{"config": "<Config YAML>", "configValues": "<ConfigValues YAML>", "appSlug": "…",
//	 "templates": [{"name": "…", "text": "<a file's text>"}]}
//
// Output (stdout, JSON): the Config and ConfigValues decode errors if any, the config items'
// values and defaults as the config context holds them, and for each template what
// Builder.RenderTemplate gives (or its error) and the YAML documents of that text as
// sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) reads them, the reader KOTS uses for manifests.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/replicatedhq/kots/pkg/template"
	kotsv1beta1 "github.com/replicatedhq/kotskinds/apis/kots/v1beta1"
	"sigs.k8s.io/yaml"
)

type input struct {
	Config       string `json:"config"`
	ConfigValues string `json:"configValues"`
	AppSlug      string `json:"appSlug"`
	Templates    []struct {
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"templates"`
}

type item struct {
	Value    string `json:"value"`
	Default  string `json:"default"`
	Filename string `json:"filename,omitempty"`
}

type rendered struct {
	Name      string        `json:"name"`
	Output    *string       `json:"output,omitempty"`
	Error     string        `json:"error,omitempty"`
	Documents []interface{} `json:"documents,omitempty"`
	YAMLError string        `json:"yamlError,omitempty"`
}

type output struct {
	ConfigError       string          `json:"configError,omitempty"`
	ConfigValuesError string          `json:"configValuesError,omitempty"`
	BuilderError      string          `json:"builderError,omitempty"`
	Items             map[string]item `json:"items"`
	Templates         []rendered      `json:"templates"`
}

// decode reads a Kubernetes-style YAML document as KOTS's scheme decoder does
// (scheme.Codecs.UniversalDeserializer, in pkg/base getTemplatingKotsKinds and pkg/kotsutil):
// YAML to JSON with no target type (sigs.k8s.io/yaml.YAMLToJSON, go-yaml v2, YAML 1.1), then
// JSON into the kotskinds type. (Kubernetes' JSON reader matches field names case-sensitively;
// encoding/json here does not, which no fixture depends on.)
func decode(text string, into interface{}) error {
	j, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return err
	}
	return json.Unmarshal(j, into)
}

// documents splits a rendered text into YAML documents and reads each as JSON values.
func documents(text string) ([]interface{}, error) {
	var docs []interface{}
	for _, part := range splitDocuments(text) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(part))
		if err != nil {
			return nil, err
		}
		var v interface{}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		docs = append(docs, v)
	}
	return docs, nil
}

// splitDocuments cuts at lines that are "---" (KOTS's util.SplitYAML does the same).
func splitDocuments(text string) []string {
	var parts []string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimRight(line, " \t\r") == "---" {
			parts = append(parts, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(parts, strings.Join(cur, "\n"))
}

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		fmt.Fprintln(os.Stderr, "input:", err)
		os.Exit(2)
	}
	out := output{Items: map[string]item{}, Templates: []rendered{}}

	configGroups := []kotsv1beta1.ConfigGroup{}
	if in.Config != "" {
		var config kotsv1beta1.Config
		if err := decode(in.Config, &config); err != nil {
			out.ConfigError = err.Error()
		} else if config.Spec.Groups != nil {
			configGroups = config.Spec.Groups
		}
	}

	// As pkg/base/templates.go, NewConfigContextTemplateBuilder. A ConfigValues that does not
	// decode is skipped there (getTemplatingKotsKinds), as if absent; a Config that does not
	// decode fails the render.
	existing := map[string]template.ItemValue{}
	if in.ConfigValues != "" {
		var values kotsv1beta1.ConfigValues
		if err := decode(in.ConfigValues, &values); err != nil {
			out.ConfigValuesError = err.Error() + " (KOTS skips this ConfigValues)"
		} else {
			for k, v := range values.Spec.Values {
				existing[k] = template.ItemValue{
					Value:          v.Value,
					Default:        v.Default,
					Filename:       v.Filename,
					RepeatableItem: v.RepeatableItem,
				}
			}
		}
	}

	app := kotsv1beta1.Application{}
	builder, itemValues, err := template.NewBuilder(template.BuilderOptions{
		ConfigGroups:    configGroups,
		ExistingValues:  existing,
		Application:     &app,
		ApplicationInfo: &template.ApplicationInfo{Slug: in.AppSlug},
		VersionInfo:     &template.VersionInfo{},
		DecryptValues:   true,
	})
	if err != nil {
		out.BuilderError = err.Error()
	}
	names := make([]string, 0, len(itemValues))
	for k := range itemValues {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := itemValues[k]
		out.Items[k] = item{Value: v.ValueStr(), Default: v.DefaultStr(), Filename: v.Filename}
	}

	for _, t := range in.Templates {
		r := rendered{Name: t.Name}
		text, err := builder.RenderTemplate(t.Name, t.Text)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Output = &text
			docs, err := documents(text)
			if err != nil {
				r.YAMLError = err.Error()
			} else {
				r.Documents = docs
			}
		}
		out.Templates = append(out.Templates, r)
	}

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
