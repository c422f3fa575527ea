// Package controller, here under the import path github.com/fluxcd/source-watcher/v2/pathpattern,
// holds source-watcher's artifactgenerator_pathpattern.go (internal/controller, copied by
// build.sh) and this export of it: the Flux oracle's code.
package controller

import (
	swapi "github.com/fluxcd/source-watcher/api/v2/v1beta1"
)

// BuildArtifactRequests gives the artifacts an ArtifactGenerator makes, its path pattern
// expanded over the sources, as source-watcher's reconcile builds them.
func BuildArtifactRequests(obj *swapi.ArtifactGenerator, localSources map[string]string) ([]swapi.OutputArtifact, error) {
	reqs, err := buildArtifactRequests(obj, localSources)
	if err != nil {
		return nil, err
	}
	out := make([]swapi.OutputArtifact, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.OutputArtifact)
	}
	return out, nil
}
