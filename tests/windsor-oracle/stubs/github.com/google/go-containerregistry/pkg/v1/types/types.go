// Package types is this project's stand-in for go-containerregistry's media types in the
// Windsor oracle.
package types

// MediaType names a blob's format.
type MediaType string

// The media types the CLI names.
const (
	DockerLayer      MediaType = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	DockerConfigJSON MediaType = "application/vnd.docker.container.image.v1+json"
)
