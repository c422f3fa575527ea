// The Flux oracle's stand-in for the Storage type of fluxcd/pkg/artifact/storage (storage.go):
// a base path and a host name, and a lock that does nothing (one process); build.sh adds the
// upstream archive.go and path.go, and appends the upstream NewArtifactFor, SetArtifactURL
// and MkdirAll. This project's code.
package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxcd/pkg/apis/meta"
)

// Storage keeps artifacts under BasePath.
type Storage struct {
	BasePath string
	Hostname string
}

// Lock takes no lock: the oracle is the only writer.
func (s Storage) Lock(meta.Artifact) (unlock func(), err error) {
	return func() {}, nil
}

var (
	_ = fmt.Sprintf
	_ = os.MkdirAll
	_ = filepath.Dir
	_ = strings.HasPrefix
	_ metav1.Object
)
