#!/usr/bin/env python3
"""Runs the KOTS oracle (build.sh) over the KOTS fixtures taken from public apps and compares its
rendering with the fixtures' expectations.

    tests/kots-oracle/run.py ORACLE_BINARY [--write]

For each fixture in FIXTURES it cuts the ResourceList's items out of input.yaml as text (at
column 0, as a file of the package holds them), gives the Config, the ConfigValues and every
other item's text to the oracle, and compares each rendered document (read as YAML by go-yaml v2,
as KOTS reads it) with the item of expected.yaml that this function generated for it (same kind
and name; kpt's and this function's own annotations left out). --write stores the oracle's input
and output as tests/kots-oracle/expected/<fixture>.json, which tests/kots_oracle.rs reads in
cargo test. Exit 1 if any document differs.
"""
import json
import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = [
    "repeat/platform-examples-gitea",
    "repeat/platform-examples-akkoma",
    "repeat/config-typed-as-kots-types-them",
    "repeat/kots/app-kots-sentry-service-default",
    "repeat/kots/app-kudo-local-image-name",
    "repeat/kots/app-nginx-ingress-placeholder",
    "repeat/kots/app-postgres-snapshots-secret",
    "repeat/kots/app-reloader-configmap",
]
# Variants: the same fixture with lines of its Config left out, for a fixture whose whole Config
# KOTS refuses; the keys of the rendered items that depend on the left-out items are not compared.
VARIANTS = {
    "repeat/config-typed-as-kots-types-them": {
        "drop": ["{name: integer, type: text, default: 5}", "{name: float, type: text, default: 1.50}"],
        "skip": ["integer", "float"],
    },
}
# Where Kubernetes requires strings, this function writes a scalar's text (docs/repeat.md, "Fields
# Kubernetes requires to be strings"); KOTS writes what the YAML says (its API server refuses it).
STRING_FIELDS = {("ConfigMap", "data"), ("Secret", "data"), ("Secret", "stringData")}
OURS = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "fn.blueprint.dev/")


def cut_items(text):
    """The items of a ResourceList as texts at column 0."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.rstrip() == "items:")
    items, cur, indent = [], None, None
    for line in lines[start + 1:]:
        stripped = line.lstrip(" ")
        ind = len(line) - len(stripped)
        if indent is None and stripped.startswith("- "):
            indent = ind
        if stripped.startswith("- ") and ind == indent:
            if cur is not None:
                items.append(cur)
            cur = [stripped[2:]]
            continue
        if stripped and not stripped.startswith("#") and indent is not None and ind <= indent \
                and not stripped.startswith("- "):
            break
        if cur is not None:
            cur.append(line[indent + 2:] if ind >= indent + 2 else stripped)
    if cur is not None:
        items.append(cur)
    return ["\n".join(i).rstrip("\n") + "\n" for i in items]


def strip_ours(doc):
    if not isinstance(doc, dict):
        return doc
    doc = json.loads(json.dumps(doc))
    ann = (doc.get("metadata") or {}).get("annotations")
    if isinstance(ann, dict):
        for k in list(ann):
            if k.startswith(OURS):
                del ann[k]
        if not ann:
            del doc["metadata"]["annotations"]
    return doc


def norm(v):
    """JSON numbers as the oracle writes them (json.Number text) against PyYAML's."""
    return json.loads(json.dumps(v, default=str))


def gostr(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def as_strings(doc):
    """doc with the fields Kubernetes requires to be strings written as text."""
    doc = json.loads(json.dumps(doc))
    for kind, field in STRING_FIELDS:
        if doc.get("kind") == kind and isinstance(doc.get(field), dict):
            doc[field] = {k: gostr(v) for k, v in doc[field].items()}
    for k in ("labels", "annotations"):
        m = (doc.get("metadata") or {}).get(k)
        if isinstance(m, dict):
            doc["metadata"][k] = {a: gostr(b) for a, b in m.items()}
    return doc


def excluded(doc):
    """KOTS drops a document whose kots.io/when is false or kots.io/exclude true (pkg/base)."""
    ann = ((doc.get("metadata") or {}).get("annotations") or {}) if isinstance(doc, dict) else {}
    when, exclude = str(ann.get("kots.io/when", "")).lower(), str(ann.get("kots.io/exclude", "")).lower()
    return when in ("false", "0", "f") or exclude in ("true", "1", "t")


def skip_keys(doc, keys):
    doc = json.loads(json.dumps(doc))
    for v in doc.values():
        if isinstance(v, dict):
            for k in keys:
                v.pop(k, None)
    return doc


def main():
    oracle = sys.argv[1]
    write = "--write" in sys.argv
    version = open(oracle + ".version").read().split("\n") if os.path.exists(oracle + ".version") else []
    failed = 0
    for fx in FIXTURES:
        d = os.path.join(ROOT, "tests", "fixtures", fx)
        text = open(os.path.join(d, "input.yaml")).read()
        rl = yaml.safe_load(text)
        texts = cut_items(text)
        assert len(texts) == len(rl["items"]), (fx, len(texts), len(rl["items"]))
        inp = {"config": "", "configValues": "", "appSlug": "", "templates": []}
        kots = ((rl.get("functionConfig") or {}).get("spec") or {}).get("kots") or {}
        inp["appSlug"] = kots.get("appSlug", "")
        for item, t in zip(rl["items"], texts):
            api, kind = item.get("apiVersion"), item.get("kind")
            if api == "kots.io/v1beta1" and kind == "Config":
                inp["config"] = t
            elif api == "kots.io/v1beta1" and kind == "ConfigValues":
                inp["configValues"] = t
            else:
                if api == "kots.io/v1beta1" and kind == "Application" and not inp["appSlug"]:
                    inp["appSlug"] = item["metadata"]["name"]
                inp["templates"].append({"name": "%s/%s" % (kind, item["metadata"]["name"]), "text": t})
        runs = [("", inp, [])]
        if fx in VARIANTS:
            v = VARIANTS[fx]
            vin = json.loads(json.dumps(inp))
            vin["config"] = "\n".join(l for l in vin["config"].split("\n")
                                      if not any(x in l for x in v["drop"])) 
            runs.append((" (Config without %s)" % ", ".join(v["skip"]), vin, v["skip"]))
        records = []
        for label, rin, skip in runs:
            res = subprocess.run([oracle], input=json.dumps(rin), capture_output=True, text=True)
            if res.returncode != 0:
                print("%s: oracle failed: %s" % (fx, res.stderr))
                failed += 1
                continue
            out = json.loads(res.stdout)
            records.append({"variant": label.strip(" ()") or "as is", "skip": skip, "input": rin, "output": out})
            failed += compare(fx + label, d, out, skip)
        if write:
            os.makedirs(os.path.join(HERE, "expected"), exist_ok=True)
            rec = {
                "fixture": fx,
                "oracle": [v for v in version if v],
                "command": "tests/kots-oracle/build.sh KOTS_GIT_DIR KOTSKINDS_GIT_DIR && tests/kots-oracle/run.py /tmp/kots-oracle/bin/kots-oracle --write",
                "runs": records,
            }
            with open(os.path.join(HERE, "expected", fx.replace("/", "_") + ".json"), "w") as f:
                json.dump(rec, f, indent=2, sort_keys=False, ensure_ascii=False)
                f.write("\n")
    sys.exit(1 if failed else 0)


def compare(fx, d, out, skip):
        failed = 0
        expected = yaml.safe_load(open(os.path.join(d, "expected.yaml")).read())
        ours = [strip_ours(i) for i in expected["items"]
                if "fn.blueprint.dev/generated-by" in ((i.get("metadata") or {}).get("annotations") or {})]
        print("== %s" % fx)
        for k in ("configError", "configValuesError", "builderError"):
            if k in out:
                print("   KOTS %s: %s" % (k, out[k]))
        for t in out["templates"]:
            if "error" in t:
                print("   %s: KOTS error: %s" % (t["name"], t["error"]))
                continue
            for doc in t.get("documents") or []:
                doc = strip_ours(doc)
                if excluded(doc):
                    print("   %s: excluded by KOTS (kots.io/when or kots.io/exclude)" % t["name"])
                    continue
                kind, name = doc.get("kind"), (doc.get("metadata") or {}).get("name")
                mine = [o for o in ours if o.get("kind") == kind and (o.get("metadata") or {}).get("name") == name]
                if not mine:
                    print("   %s: no generated item of ours (KOTS renders it; ours keeps or drops it)" % t["name"])
                    continue
                if skip:
                    doc, mine = skip_keys(doc, skip), [skip_keys(m, skip) for m in mine]
                if any(norm(m) == norm(doc) for m in mine):
                    print("   %s: same" % t["name"])
                elif any(norm(as_strings(m)) == norm(as_strings(doc)) for m in mine):
                    print("   %s: same, but for scalars Kubernetes requires as strings (KOTS: %s)" % (
                        t["name"], json.dumps(doc, sort_keys=True)))
                else:
                    failed += 1
                    print("   %s: DIFFERS\n     KOTS: %s\n     ours: %s" % (
                        t["name"], json.dumps(doc, sort_keys=True), json.dumps(mine[0], sort_keys=True)))
        return failed


main()
