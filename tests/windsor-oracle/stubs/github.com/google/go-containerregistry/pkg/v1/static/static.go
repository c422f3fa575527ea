// Package static is this project's stand-in for go-containerregistry's static layers in the
// Windsor oracle.
package static

import (
	"bytes"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type layer struct {
	data []byte
	mt   types.MediaType
}

func (l layer) Digest() (v1.Hash, error) { return v1.Hash{Algorithm: "sha256"}, nil }
func (l layer) Uncompressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.data)), nil
}
func (l layer) MediaType() (types.MediaType, error) { return l.mt, nil }

// NewLayer gives a layer holding data.
func NewLayer(data []byte, mt types.MediaType) v1.Layer { return layer{data, mt} }
