// Package mutate is this project's stand-in for go-containerregistry's mutate in the Windsor
// oracle: the oracle builds no images, so every change gives the image unchanged.
package mutate

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// AppendLayers gives the image unchanged.
func AppendLayers(base v1.Image, _ ...v1.Layer) (v1.Image, error) { return base, nil }

// ConfigFile gives the image unchanged.
func ConfigFile(base v1.Image, _ *v1.ConfigFile) (v1.Image, error) { return base, nil }

// MediaType gives the image unchanged.
func MediaType(base v1.Image, _ types.MediaType) v1.Image { return base }

// ConfigMediaType gives the image unchanged.
func ConfigMediaType(base v1.Image, _ types.MediaType) v1.Image { return base }

// Annotations gives the image unchanged.
func Annotations(base v1.Image, _ map[string]string) any { return base }
