// Stub for the KOTS oracle (tests/kots-oracle): only the identifiers replicatedhq/kots
// pkg/template uses, answering as KOTS does with no cluster, no registry and no license.
// Written for this project; not upstream code.
package image

import (
	"errors"

	dockerregistrytypes "github.com/replicatedhq/kots/pkg/docker/registry/types"
)

// IsPrivateImage asks the image's registry in KOTS; the oracle has no network and takes
// every image as public (what KOTS finds for a public image).
func IsPrivateImage(image string, dockerHubRegistry dockerregistrytypes.RegistryOptions) (bool, error) {
	return false, nil
}

func RewritePrivateImage(srcRegistry dockerregistrytypes.RegistryOptions, image string, appSlug string) (string, error) {
	return "", errors.New("oracle: private images are not rewritten")
}
