// The Flux oracle's stand-in for the Storage type of fluxcd/pkg/artifact/storage (storage.go):
// only the base path; build.sh adds the upstream archive.go and path.go. This project's code.
package storage

// Storage keeps artifacts under BasePath.
type Storage struct {
	BasePath string
}
