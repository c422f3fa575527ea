// Package empty is this project's stand-in for go-containerregistry's empty image in the Windsor
// oracle.
package empty

import (
	"errors"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var errNone = errors.New("windsor-oracle: no images")

type image struct{}

func (image) Layers() ([]v1.Layer, error)             { return nil, nil }
func (image) Manifest() (*v1.Manifest, error)         { return &v1.Manifest{}, nil }
func (image) LayerByDigest(v1.Hash) (v1.Layer, error) { return nil, errNone }
func (image) ConfigName() (v1.Hash, error)            { return v1.Hash{}, errNone }
func (image) RawConfigFile() ([]byte, error)          { return nil, errNone }

// Image is an image with no layers.
var Image v1.Image = image{}
