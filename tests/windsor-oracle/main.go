// Command windsor-oracle composes a Windsor blueprint with windsorcli/cli's own code, as
// `windsor show blueprint` does, for one context of a project whose template is given.
//
//	windsor-oracle [--display] [--json] [--env NAME=VALUE] TEMPLATE_DIR CONTEXT VALUES_YAML [BLUEPRINT_YAML]
//
// It lays out a project in a temporary directory named core (windsor.yaml, .windsor/context naming CONTEXT,
// contexts/_template a copy of TEMPLATE_DIR, contexts/CONTEXT/values.yaml the given values,
// contexts/CONTEXT/blueprint.yaml the given BLUEPRINT_YAML, if any) and runs what `windsor show blueprint` runs there:
// runtime.NewRuntime and project.NewProject's context root, Runtime.ResolveConfig (the context
// defaults: dev mode for `local`, the workstation runtime, the platform; windsor.yaml and
// values.yaml; the schema), Runtime.InitializeComponents, then the blueprint handler's
// LoadBlueprint and Generate. It prints the Blueprint as `show blueprint` prints it
// (blueprint.RenderForDisplay, YAML with literal multi-line strings); deferred values are kept as
// written (`--raw`) unless --display is given. With --kustomizations, every Flux Kustomization
// follows, as `windsor show kustomization <name>` prints it. When composition fails it prints
// `error: <message>` on stdout and exits 1.
//
// Left out of `windsor show blueprint`: project.Configure's LoadEnvironment (the environment
// printers run tools and set the process environment; here `env()` sees only WINDSOR_CONTEXT
// and WINDSOR_PROJECT_ROOT and the variables given with --env), and ComposeBlueprint's
// GenerateContextID (a random `id`; set `id` in the values to name one).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/windsorcli/cli/pkg/composer/artifact"
	"github.com/windsorcli/cli/pkg/composer/blueprint"
	"github.com/windsorcli/cli/pkg/constants"
	"github.com/windsorcli/cli/pkg/runtime"
	"github.com/windsorcli/cli/pkg/runtime/shell"
)

type envFlags map[string]string

func (e envFlags) String() string { return fmt.Sprint(map[string]string(e)) }

func (e envFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("--env wants NAME=VALUE, got %q", s)
	}
	e[k] = v
	return nil
}

func main() {
	kustomizations := flag.Bool("kustomizations", false, "after the Blueprint, print every Flux Kustomization as show kustomization <name> prints it")
	display := flag.Bool("display", false, "render deferred values as <deferred>, as show blueprint does without --raw")
	asJSON := flag.Bool("json", false, "print JSON instead of YAML")
	env := envFlags{}
	flag.Var(env, "env", "NAME=VALUE that env() sees (repeatable)")
	flag.Parse()
	if flag.NArg() != 3 && flag.NArg() != 4 {
		fmt.Fprintln(os.Stderr, "usage: windsor-oracle [--display] [--json] [--env NAME=VALUE] TEMPLATE_DIR CONTEXT VALUES_YAML [BLUEPRINT_YAML]")
		os.Exit(2)
	}
	out, err := run(flag.Arg(0), flag.Arg(1), flag.Arg(2), flag.Arg(3), !*display, *asJSON, *kustomizations, env)
	if err != nil {
		fmt.Printf("error: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
		os.Exit(1)
	}
	fmt.Print(out)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

func run(templateDir, contextName, valuesPath, blueprintPath string, raw, asJSON, kustomizations bool, env map[string]string) (string, error) {
	values, err := os.ReadFile(valuesPath)
	if err != nil {
		return "", err
	}
	var contextBlueprint []byte
	if blueprintPath != "" {
		if contextBlueprint, err = os.ReadFile(blueprintPath); err != nil {
			return "", err
		}
	}
	scratch, err := os.MkdirTemp("", "windsor-oracle-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	// The project's folder is named core, as a clone of windsorcli/core is (the dev repository's
	// URL names it).
	root := filepath.Join(scratch, "core")
	home := filepath.Join(scratch, "home")
	for _, dir := range []string{home, filepath.Join(root, ".windsor"), filepath.Join(root, "contexts", contextName)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	if err := copyTree(templateDir, filepath.Join(root, "contexts", "_template")); err != nil {
		return "", err
	}
	files := map[string]string{
		"windsor.yaml":     "version: v1alpha1\n",
		".windsor/context": contextName,
		filepath.Join("contexts", contextName, "values.yaml"): string(values),
	}
	if contextBlueprint != nil {
		files[filepath.Join("contexts", contextName, "blueprint.yaml")] = string(contextBlueprint)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	// The project is found from the working directory; nothing is read from the caller's home.
	if err := os.Chdir(root); err != nil {
		return "", err
	}
	os.Setenv("HOME", home)
	os.Unsetenv("WINDSOR_CONTEXT")
	os.Unsetenv("WINDSOR_PROJECT_ROOT")

	rt := runtime.NewRuntime(&runtime.Runtime{Shell: shell.NewDefaultShell()})
	// project.NewProject: the context named, its config root under contexts/.
	rt.ContextName = contextName
	rt.ConfigRoot = filepath.Join(rt.ProjectRoot, "contexts", contextName)
	handler := blueprint.NewBlueprintHandler(rt, artifact.NewArtifactBuilder(rt))
	if err := rt.ResolveConfig(nil); err != nil {
		return "", err
	}
	if err := rt.InitializeComponents(); err != nil {
		return "", err
	}
	lookup := map[string]string{"WINDSOR_CONTEXT": contextName, "WINDSOR_PROJECT_ROOT": rt.ProjectRoot}
	for k, v := range env {
		lookup[k] = v
	}
	rt.Evaluator.SetEnvLookup(func(name string) (string, bool) {
		v, ok := lookup[name]
		return v, ok
	})

	composeErr := handler.LoadBlueprint()
	bp := handler.Generate()
	if bp == nil {
		if composeErr != nil {
			return "", composeErr
		}
		return "", errors.New("failed to generate blueprint")
	}
	if composeErr != nil {
		// show blueprint prints the blueprint and warns; the matrix records it as an error.
		return "", composeErr
	}
	resource := blueprint.RenderForDisplay(bp, raw, handler.GetDeferredPaths())
	var out []byte
	if asJSON {
		out, err = json.MarshalIndent(resource, "", "  ")
		out = append(out, '\n')
	} else {
		out, err = yaml.MarshalWithOptions(resource, yaml.UseLiteralStyleIfMultiline(true))
	}
	if err != nil {
		return "", err
	}
	if !kustomizations {
		return string(out), nil
	}
	// show kustomization <name>, for every name show kustomization lists (cmd/show.go
	// buildFluxKustomization: the blueprint's name as the default source, its ConfigMaps in
	// postBuild.substituteFrom, gitops.namespace and gitops.mode).
	namespace := rt.ConfigHandler.GetString("gitops.namespace", constants.DefaultGitopsNamespace)
	mode := constants.ParseGitopsMode(rt.ConfigHandler.GetString("gitops.mode", ""))
	text := string(out)
	for _, k := range bp.AllKustomizations() {
		k := k
		flux := k.ToFluxKustomization(namespace, bp.Metadata.Name, bp.Sources, mode, bp.ConfigMaps)
		shown := blueprint.RenderForDisplay(flux, raw, handler.GetDeferredPaths())
		doc, err := yaml.MarshalWithOptions(shown, yaml.UseLiteralStyleIfMultiline(true))
		if err != nil {
			return "", err
		}
		text += "---\n" + string(doc)
	}
	return text, nil
}
