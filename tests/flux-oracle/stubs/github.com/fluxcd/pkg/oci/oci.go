// Package oci is the Flux oracle's stand-in for fluxcd/pkg/oci: only RenameWithFallback, which
// Storage.Archive calls, as a rename. This project's code.
package oci

import "os"

// RenameWithFallback renames oldpath to newpath.
func RenameWithFallback(oldpath, newpath string) error {
	return os.Rename(oldpath, newpath)
}
