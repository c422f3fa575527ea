#!/usr/bin/env bash
# Builds the KOTS oracle (main.go) against replicatedhq/kots's own pkg/template, in GOPATH mode
# with Debian's Go and Go libraries, in a scratch GOPATH outside the repository.
#
#   tests/kots-oracle/build.sh KOTS_GIT_DIR KOTSKINDS_GIT_DIR [SCRATCH]
#
# KOTS_GIT_DIR and KOTSKINDS_GIT_DIR are git directories (bare clones are fine) of
# replicatedhq/kots and replicatedhq/kotskinds (both Apache-2.0); their HEAD is used, or the
# commits in KOTS_COMMIT / KOTSKINDS_COMMIT. SCRATCH defaults to /tmp/kots-oracle; the binary is
# SCRATCH/bin/kots-oracle. Nothing upstream is copied into the repository.
#
# Needs: apt-get install golang-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev
#        golang-github-pkg-errors-dev golang-github-docker-go-units-dev golang-github-google-gofuzz-dev
#        golang-gopkg-yaml.v3-dev
#
# What is upstream and what is stubbed (stubs/, this project's code):
# - upstream kots: pkg/template/*.go (not the tests), pkg/docker/registry/types,
#   pkg/registry/types, pkg/identity/types, and SecretNameFromPrefix from
#   pkg/docker/registry/registry.go (appended to the stub of that package);
# - upstream kotskinds: multitype, and apis/kots/v1beta1's config, configvalues, application,
#   installation, identityconfig, ingress and airgap types (its scheme registration is stubbed);
# - stubbed: Kubernetes (api, apimachinery, client-go), Helm's lookup, troubleshoot, kURL kinds,
#   the license wrapper (always empty), registry access and image checks (every image public),
#   kots's k8sutil, kurl, crypto, logger, buildversion, util;
# - Debian: Go, Sprig v3 (3.2.3 where kots pins 3.3.0), go-units, pkg/errors, sigs.k8s.io/yaml,
#   yaml.v3 (also under go.yaml.in/yaml/v3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kots=${1:?KOTS_GIT_DIR}
kinds=${2:?KOTSKINDS_GIT_DIR}
scratch=${3:-/tmp/kots-oracle}
kots_commit=${KOTS_COMMIT:-$(git --git-dir="$kots" rev-parse HEAD)}
kinds_commit=${KOTSKINDS_COMMIT:-$(git --git-dir="$kinds" rev-parse HEAD)}
case "$scratch" in
  "$here"*|"$(cd "$here/../.." && pwd)"*) echo "build.sh: SCRATCH must be outside the repository" >&2; exit 2 ;;
esac

rm -rf "$scratch"
gp=$scratch/gopath
src=$gp/src
mkdir -p "$src" "$scratch/bin" "$scratch/upstream/kots" "$scratch/upstream/kotskinds"

# Upstream sources, at the named commits, into the scratch directory only.
git --git-dir="$kots" archive "$kots_commit" pkg/template pkg/docker/registry pkg/registry/types \
  pkg/identity/types | tar -x -C "$scratch/upstream/kots"
git --git-dir="$kinds" archive "$kinds_commit" apis/kots/v1beta1 multitype \
  | tar -x -C "$scratch/upstream/kotskinds"

# Stubs first; upstream files are added next to them.
cp -r "$here/stubs/." "$src/"

up=$scratch/upstream/kots
k=$src/github.com/replicatedhq/kots
mkdir -p "$k/pkg/template" "$k/pkg/docker/registry/types" "$k/pkg/registry/types" "$k/pkg/identity/types"
for f in "$up"/pkg/template/*.go; do
  case "$f" in *_test.go) ;; *) cp "$f" "$k/pkg/template/" ;; esac
done
for d in pkg/docker/registry/types pkg/registry/types pkg/identity/types; do
  for f in "$up/$d"/*.go; do case "$f" in *_test.go) ;; *) cp "$f" "$k/$d/" ;; esac; done
done
# KOTS's own SecretNameFromPrefix, the function ImagePullSecretName calls.
{
  echo
  echo "// From replicatedhq/kots $kots_commit pkg/docker/registry/registry.go (Apache-2.0)."
  awk '/^func SecretNameFromPrefix\(/,/^}/' "$up/pkg/docker/registry/registry.go"
} >> "$k/pkg/docker/registry/stub.go"
grep -q 'func SecretNameFromPrefix' "$k/pkg/docker/registry/stub.go"
sed -i 's/^import (/import (\n\t"fmt"/' "$k/pkg/docker/registry/stub.go"

ku=$scratch/upstream/kotskinds
kk=$src/github.com/replicatedhq/kotskinds
mkdir -p "$kk/multitype" "$kk/apis/kots/v1beta1"
for f in "$ku"/multitype/*.go; do case "$f" in *_test.go) ;; *) cp "$f" "$kk/multitype/" ;; esac; done
for t in config configvalues application installation identityconfig ingress airgap; do
  cp "$ku/apis/kots/v1beta1/${t}_types.go" "$kk/apis/kots/v1beta1/"
done

# Debian's libraries under the import paths kots uses.
deb=/usr/share/gocode/src
mkdir -p "$src/github.com/Masterminds/sprig" "$src/github.com/Masterminds/semver" "$src/go.yaml.in/yaml"
cp -r "$deb/github.com/Masterminds/sprig" "$src/github.com/Masterminds/sprig/v3"
cp -r "$deb/github.com/Masterminds/semver" "$src/github.com/Masterminds/semver/v3"
cp -r "$deb/gopkg.in/yaml.v3" "$src/go.yaml.in/yaml/v3"

mkdir -p "$src/render-blueprint/kots-oracle"
cp "$here/main.go" "$src/render-blueprint/kots-oracle/"

export GOPATH="$gp:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$scratch/cache"
( cd "$src/render-blueprint/kots-oracle" && go build -o "$scratch/bin/kots-oracle" . )
printf '%s\n' "kots $kots_commit" "kotskinds $kinds_commit" "$(go version)" > "$scratch/bin/kots-oracle.version"
echo "$scratch/bin/kots-oracle"
