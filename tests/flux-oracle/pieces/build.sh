#!/usr/bin/env bash
# Builds the two Flux oracles, varsub/main.go and artifact/main.go, against fluxcd/pkg's own
# envsubst and sourceignore packages, in GOPATH mode with Debian's Go and Go libraries, in a
# scratch GOPATH outside the repository.
#
#   tests/flux-oracle/pieces/build.sh FLUXCD_PKG_GIT_DIR [SCRATCH]
#
# FLUXCD_PKG_GIT_DIR is a git directory (a bare clone is fine) of fluxcd/pkg (Apache-2.0); the
# tags envsubst/v1.7.0 and sourceignore/v0.18.0 are used (what kustomize-controller v1.9's go.mod
# requires). SCRATCH defaults to /tmp/flux-oracle-pieces; the binaries are SCRATCH/bin/varsub and
# SCRATCH/bin/artifact. Nothing upstream is copied into the repository.
#
# Needs: apt-get install golang-go golang-k8s-sigs-yaml-dev golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=${1:?FLUXCD_PKG_GIT_DIR}
scratch=${2:-/tmp/flux-oracle-pieces}
mkdir -p "$scratch/src/github.com/fluxcd/pkg" "$scratch/bin"
for tag in envsubst/v1.7.0 sourceignore/v0.18.0; do
  git --git-dir="$pkg" archive "$tag" "${tag%%/*}" | tar -x -C "$scratch/src/github.com/fluxcd/pkg"
done
for oracle in varsub artifact; do
  (cd "$here/$oracle" && GO111MODULE=off GOPATH="$scratch:/usr/share/gocode" go build -o "$scratch/bin/$oracle" main.go)
done
echo "$scratch/bin/varsub $scratch/bin/artifact"
