// Package v1 is this project's stand-in for go-containerregistry's image model in the Windsor
// oracle: the types the CLI names, and no image is ever read from or written to a registry.
package v1

import (
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Hash is a content digest.
type Hash struct {
	Algorithm, Hex string
}

// String writes algorithm:hex.
func (h Hash) String() string { return h.Algorithm + ":" + h.Hex }

// Descriptor names a blob.
type Descriptor struct {
	MediaType   types.MediaType
	Size        int64
	Digest      Hash
	Annotations map[string]string
}

// Manifest is an image manifest.
type Manifest struct {
	SchemaVersion int64
	MediaType     types.MediaType
	Config        Descriptor
	Layers        []Descriptor
	Annotations   map[string]string
}

// Time is a timestamp.
type Time struct {
	time.Time
}

// Config is an image's run configuration.
type Config struct {
	Labels map[string]string
	Env    []string
}

// RootFS lists the layers' diff ids.
type RootFS struct {
	Type    string
	DiffIDs []Hash
}

// History is one build step.
type History struct {
	Author, CreatedBy, Comment string
	Created                    Time
	EmptyLayer                 bool
}

// ConfigFile is an image's configuration.
type ConfigFile struct {
	Architecture string
	OS           string
	Created      Time
	Author       string
	Config       Config
	RootFS       RootFS
	History      []History
}

// Layer is one layer.
type Layer interface {
	Digest() (Hash, error)
	Uncompressed() (io.ReadCloser, error)
	MediaType() (types.MediaType, error)
}

// Image is an image.
type Image interface {
	Layers() ([]Layer, error)
	Manifest() (*Manifest, error)
	LayerByDigest(Hash) (Layer, error)
	ConfigName() (Hash, error)
	RawConfigFile() ([]byte, error)
}
