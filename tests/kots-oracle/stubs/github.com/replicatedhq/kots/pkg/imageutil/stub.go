// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package imageutil

import (
	"errors"

	registrytypes "github.com/replicatedhq/kots/pkg/docker/registry/types"
)

func DestImage(destRegistry registrytypes.RegistryOptions, srcImage string) (string, error) {
	return "", errors.New("oracle: local registry images are not built")
}
