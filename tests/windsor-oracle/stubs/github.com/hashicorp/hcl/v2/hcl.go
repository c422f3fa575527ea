// Package hcl is this project's stand-in for hashicorp/hcl/v2 in the Windsor oracle: the
// composition reads no terraform files.
package hcl

// Pos is a position in a file.
type Pos struct {
	Line, Column, Byte int
}

// Diagnostic is one problem.
type Diagnostic struct {
	Summary, Detail string
}

// Diagnostics are problems.
type Diagnostics []*Diagnostic

// HasErrors says whether there are any.
func (d Diagnostics) HasErrors() bool { return len(d) > 0 }

// Error joins their summaries.
func (d Diagnostics) Error() string {
	s := ""
	for _, x := range d {
		s += x.Summary + "; "
	}
	return s
}
