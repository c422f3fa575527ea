// Package hclwrite is this project's stand-in for hashicorp/hcl/v2/hclwrite in the Windsor
// oracle: parsing always fails, as the composition reads no terraform files.
package hclwrite

import hcl "github.com/hashicorp/hcl/v2"

// File is a parsed file (never made).
type File struct{}

// ParseConfig always fails.
func ParseConfig([]byte, string, hcl.Pos) (*File, hcl.Diagnostics) {
	return nil, hcl.Diagnostics{{Summary: "windsor-oracle: hcl is not available"}}
}
