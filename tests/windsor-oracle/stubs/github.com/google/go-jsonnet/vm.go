// Package jsonnet is this project's stand-in for google/go-jsonnet in the Windsor oracle (the
// v0.22.0 windsorcli/cli pins is not in the mirrors): windsorcli/core does not call `jsonnet()`,
// and here every evaluation fails.
package jsonnet

import "errors"

// Importer resolves imports (unused).
type Importer interface{}

// FileImporter imports from JPaths (unused).
type FileImporter struct {
	JPaths []string
}

// VM evaluates nothing.
type VM struct{}

// MakeVM gives a VM.
func MakeVM() *VM { return &VM{} }

// ExtCode is ignored.
func (*VM) ExtCode(string, string) {}

// Importer is ignored.
func (*VM) Importer(Importer) {}

// EvaluateAnonymousSnippet always fails.
func (*VM) EvaluateAnonymousSnippet(string, string) (string, error) {
	return "", errors.New("windsor-oracle: jsonnet is not available")
}
