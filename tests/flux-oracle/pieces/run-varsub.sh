#!/usr/bin/env bash
# run-varsub.sh SOURCE_DIR STRICT VARS.json: the pinned kustomize builds SOURCE_DIR (every *.yaml
# a resource, when it has no kustomization.yaml), then the varsub oracle ($VARSUB, default
# /tmp/flux-oracle-pieces/bin/varsub) substitutes each object; prints each as JSON, or Flux's error.
set -euo pipefail
src=$1; strict=$2; vars=$3
tmp=$(mktemp -d); cp -r "$src"/. "$tmp"
(cd "$tmp"; if [ ! -f kustomization.yaml ]; then echo "resources:" > kustomization.yaml; for f in *.yaml; do [ "$f" = kustomization.yaml ] || echo "- $f" >> kustomization.yaml; done; fi)
"$(dirname "$0")/../../.tools/kubectl/bin/kubectl" kustomize "$tmp" > "$tmp/out.yaml"
python3 - "$tmp/out.yaml" "$strict" "$vars" <<'PY'
import os, sys, subprocess
docs = open(sys.argv[1]).read().split("\n---\n")
for d in docs:
    r = subprocess.run([os.environ.get("VARSUB", "/tmp/flux-oracle-pieces/bin/varsub"), sys.argv[2], sys.argv[3]], input=d.encode(), capture_output=True)
    print(r.stdout.decode().strip())
PY
rm -rf "$tmp"
