#!/usr/bin/env python3
"""Runs the Flux oracle (build.sh) over the flux-build golden cases and the oracle's own probes,
and compares the objects it builds with the case's expected output and with what this project's
flux-build gives now.

    tests/flux-oracle/run.py ORACLE_BINARY [--write] [--ours BINARY] [CASE...]

Cases: every tests/fixtures/flux-build/<case> whose cmd gives a package and --source (the others
stop before a build: no source, a cycle, a missing tool), and every tests/flux-oracle/probes/<probe>
(laid out the same way: cmd, pkg/, source/). The oracle runs in the case's directory with the
cmd's package and sources, as kustomize-controller v1.9 does by default (the artifact made by
source-controller's filter, strict substitution), and again without the artifact step, without
strict substitution, and going on as the controller's apply does (the objects normalized: that
variant is recorded, not compared); a variant is kept when it differs from the first.

Objects are compared by apiVersion, kind, namespace and name, over all Kustomizations of the case
(a cmd's --kustomization keeps one). Without --show-secrets, flux-build prints a Secret's values as
<redacted>; the oracle's are redacted the same way before comparing. --ours BINARY runs
`BINARY flux-build ...` as the cmd says (default target/debug/render-blueprint, if built).
--write stores the oracle's results as tests/flux-oracle/expected/<case>.yaml. Exit 1 if any
case's objects differ from the oracle's (controller variant) or ours fails where it builds.
"""
import json
import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "flux-build")
PROBES = os.path.join(HERE, "probes")
# Cases whose outcome is decided before or outside a Kustomization's build: the oracle builds each
# Kustomization (it has no dependsOn, no tool lookup and no API server validation of names).
NOT_COMPARED = {
    "dependency-cycle": "dependsOn: the controller waits for the dependencies, which never become ready",
    "cycle-does-not-hide-others": "dependsOn: the controller waits for a cycle's Kustomizations for ever",
    "missing-dependency": "dependsOn: the controller waits for a Kustomization that does not exist",
    "no-kustomize": "flux-build needs a kustomize binary; the oracle has kustomize built in",
    "output-dir-absolute": "the API server refuses the Kustomization's namespace before anything is built",
    "output-dir-collision": "the API server refuses the Kustomization's namespace before anything is built",
    "output-dir-escape": "the API server refuses the Kustomization's namespace before anything is built",
    "artifact-generator-sources": "a --source for an ExternalArtifact wins over its generator here (a deliberate "
    "difference, docs/compatibility.md); the oracle always makes the artifact from its generator",
    "nested-kustomization-unknown": "--kustomization names no Kustomization: a usage error before any build",
    "nested-waits-for-deferred": "the oracle builds in file order, without waiting for the ArtifactGenerator a "
    "later build applies; probe-nested-waits-for-deferred lists that build first",
    "artifact-generator-applied": "the oracle builds in file order, without waiting for the ArtifactGenerator a "
    "later build applies; probe-artifact-generator-applied lists that build first",
}
# Cases whose differences are deliberate and listed in docs/compatibility.md: compared and
# printed, not counted.
DOCUMENTED = {
    "probe-numbers": "an integer beyond 64 bits keeps its digits, and a variable named like a YAML 1.1 boolean "
    "is that variable (docs/compatibility.md)",
}
VARIANTS = [
    ("controller", []),
    ("no-artifact", ["--no-artifact"]),
    ("not-strict", ["--strict=false"]),
    ("applied", ["--normalize"]),
]
# Variants recorded but not compared: what the controller's apply sends (normalized objects) is
# not what `flux build kustomization`, and so flux-build, prints.
NOT_COMPARED_VARIANTS = {"applied"}


class BlockDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks."""


def _str(dumper, s):
    if "\n" in s and all(c == "\n" or c >= " " for c in s) and not any(
            l != l.rstrip() for l in s.split("\n")):
        return dumper.represent_scalar("tag:yaml.org,2002:str", s, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", s)


BlockDumper.add_representer(str, _str)


def read_cmd(case_dir):
    """The cmd's arguments and its comment lines."""
    args, comments = [], []
    for line in open(os.path.join(case_dir, "cmd")).read().split("\n"):
        if line.startswith("#"):
            comments.append(line[1:].strip())
        elif line.strip():
            args.append(line.strip())
    return args, comments


# The oracle's flags that a cmd's own flags ask for (--max-nesting, --strict-substitutions),
# given to every variant: set by parse().
case_flags = []


def parse(args):
    """(package, [sources], kustomization or None, show_secrets) from a flux-build cmd."""
    pkg, sources, only, show = None, [], None, False
    del case_flags[:]
    i = 1
    while i < len(args):
        a = args[i]
        if a == "--source":
            sources.append(args[i + 1])
            i += 2
        elif a.startswith("--source="):
            sources.append(a.split("=", 1)[1])
            i += 1
        elif a == "--kustomization":
            only = args[i + 1]
            i += 2
        elif a == "--max-nesting":
            case_flags.append("--nested=" + args[i + 1])
            i += 2
        elif a.startswith("--strict-substitutions="):
            case_flags.append("--strict=" + a.split("=", 1)[1])
            i += 1
        elif a in ("--output-dir", "-o", "--kustomize"):
            i += 2
        elif a == "--show-secrets":
            show = True
            i += 1
        elif a.startswith("-"):
            i += 1
        else:
            pkg = pkg or a
            i += 1
    return pkg, sources, only, show


def ident(o):
    """The object's Kustomization (its owner labels) and identity."""
    m = o.get("metadata") or {}
    labels = m.get("labels") if isinstance(m.get("labels"), dict) else {}
    owner = "%s/%s" % (labels.get("kustomize.toolkit.fluxcd.io/namespace", ""),
                       labels.get("kustomize.toolkit.fluxcd.io/name", ""))
    return (owner, o.get("apiVersion"), o.get("kind"), m.get("namespace"), m.get("name"))


def redact(o):
    if o.get("apiVersion") == "v1" and o.get("kind") == "Secret":
        o = json.loads(json.dumps(o))
        for f in ("data", "stringData"):
            if isinstance(o.get(f), dict):
                o[f] = {k: "<redacted>" for k in o[f]}
    return o


def norm(v):
    return json.loads(json.dumps(v, sort_keys=True, default=str))


def run_oracle(oracle, case_dir, pkg, sources, extra):
    cmd = [oracle] + extra
    for s in sources:
        cmd += ["--source", s]
    cmd.append(pkg)
    res = subprocess.run(cmd, cwd=case_dir, capture_output=True, text=True)
    if res.returncode != 0:
        return {"failed": res.stderr.strip()}
    return json.loads(res.stdout)


def select(results, only):
    if not only:
        return results
    return [r for r in results if r["kustomization"] == only or r["kustomization"].split("/")[1] == only]


def run_ours(ours, case_dir, args):
    res = subprocess.run([ours] + args, cwd=case_dir, capture_output=True, text=True)
    docs = []
    try:
        docs = [d for d in yaml.safe_load_all(res.stdout) if d is not None]
    except yaml.YAMLError as e:
        return res.returncode, None, "unreadable output: %s" % e
    return res.returncode, docs, res.stderr.strip()


def compare(label, oracle_objs, docs):
    """Lines describing the differences; empty when the objects are the same."""
    lines = []
    want = {}
    for o in oracle_objs:
        want.setdefault(ident(o), []).append(o)
    got = {}
    for d in docs:
        got.setdefault(ident(d), []).append(d)
    # A Kustomization none of whose objects are on one side is reported once.
    owners_want = {k[0] for k in want}
    owners_got = {k[0] for k in got}
    whole = set()
    for owner in owners_want | owners_got:
        w = [k for k in want if k[0] == owner]
        g = [k for k in got if k[0] == owner]
        if w and not g:
            lines.append("   %s: the %d objects of %s only in the oracle's build" % (label, len(w), owner))
            whole.add(owner)
        elif g and not w:
            lines.append("   %s: the %d objects of %s only in ours" % (label, len(g), owner))
            whole.add(owner)
    lines.sort()
    for k in sorted(set(want) | set(got), key=lambda t: tuple(str(x) for x in t)):
        if k[0] in whole:
            continue
        name = "%s %s %s/%s (of %s)" % (k[1], k[2], k[3] or "", k[4], k[0])
        if k not in got:
            lines.append("   %s: %s only in the oracle's build" % (label, name))
        elif k not in want:
            lines.append("   %s: %s only in ours" % (label, name))
        elif sorted(json.dumps(norm(x), sort_keys=True) for x in want[k]) != \
                sorted(json.dumps(norm(x), sort_keys=True) for x in got[k]):
            lines.append("   %s: %s DIFFERS\n     oracle: %s\n     ours:   %s" % (
                label, name, " | ".join(json.dumps(norm(x), sort_keys=True) for x in want[k]),
                " | ".join(json.dumps(norm(x), sort_keys=True) for x in got[k])))
    return lines


def outcome(label, results, docs, code, show):
    """Differences between one oracle variant and a build of ours (docs, exit code)."""
    objs = [o if show else redact(o) for r in results for o in r["objects"]]
    errors = [r["kustomization"] for r in results if r.get("error")]
    diff = compare(label, objs, docs)
    if errors and code == 0:
        diff.append("   %s: exit 0 where the oracle fails %s" % (label, ", ".join(errors)))
    if not errors and code != 0:
        diff.append("   %s: exit %d where the oracle builds every Kustomization" % (label, code))
    return diff


def report(d, args, show, variants, ours):
    """Prints how the case's expected output and our build compare with the oracle's variants;
    1 if ours differs from the controller variant."""
    failed = 0
    exp_file = os.path.join(d, "expected.yaml")
    if os.path.exists(exp_file):
        code = 0
        if os.path.exists(os.path.join(d, "expected.exit")):
            code = int(open(os.path.join(d, "expected.exit")).read().strip() or 0)
        docs = [x for x in yaml.safe_load_all(open(exp_file).read()) if x is not None]
        for v in variants:
            if v["variant"] in NOT_COMPARED_VARIANTS:
                continue
            diff = outcome("expected.yaml vs %s" % v["variant"], v["results"], docs, code, show)
            print("\n".join(diff) if diff else "   expected.yaml: same as the oracle (%s)" % v["variant"])
    if ours:
        code, docs, err = run_ours(ours, d, args)
        if docs is None:
            print("   ours: %s" % err)
            return 1
        same = []
        for i, v in enumerate(variants):
            if v["variant"] in NOT_COMPARED_VARIANTS:
                continue
            diff = outcome("ours vs %s" % v["variant"], v["results"], docs, code, show)
            if not diff:
                same.append(v["variant"])
            elif i == 0:
                failed = 1
                print("\n".join(diff))
                if err:
                    print("     ours' stderr: " + err.replace("\n", "\n       "))
        if same:
            print("   ours (exit %d): same as the oracle (%s)" % (code, ", ".join(same)))
    return failed


def cases(selected):
    out = []
    for base, prefix in ((FIXTURES, ""), (PROBES, "probe-")):
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            d = os.path.join(base, name)
            if not os.path.isfile(os.path.join(d, "cmd")):
                continue
            if selected and name not in selected and prefix + name not in selected:
                continue
            out.append((prefix + name, d))
    return out


def main():
    argv = sys.argv[1:]
    if not argv:
        print(__doc__)
        sys.exit(2)
    oracle = os.path.abspath(argv.pop(0))
    write = "--write" in argv
    ours = os.path.join(ROOT, "target", "debug", "render-blueprint")
    if "--ours" in argv:
        ours = os.path.abspath(argv[argv.index("--ours") + 1])
        del argv[argv.index("--ours"):argv.index("--ours") + 2]
    selected = [a for a in argv if not a.startswith("--")]
    if not os.path.exists(ours):
        ours = None
    version = []
    if os.path.exists(oracle + ".version"):
        version = [v for v in open(oracle + ".version").read().split("\n") if v]
    failed = 0
    for name, d in cases(selected):
        args, comments = read_cmd(d)
        if not args or args[0] != "flux-build":
            continue
        pkg, sources, only, show = parse(args)
        if not pkg or not sources:
            print("== %s: not built (no package or no --source in cmd)" % name)
            continue
        print("== %s" % name)
        variants, first = [], None
        for vname, extra in VARIANTS:
            out = run_oracle(oracle, d, pkg, sources, case_flags + extra)
            if "failed" in out:
                print("   oracle failed (%s): %s" % (vname, out["failed"]))
                failed += 1
                break
            results = select(out["results"], only)
            if first is not None and norm(results) == norm(first):
                continue
            first = first if first is not None else results
            variants.append({"variant": vname, "oracle-args": extra, "strict": out["strict"],
                             "artifact": out["artifact"], "normalized": out.get("normalized", False),
                             "results": results})
        if not variants:
            continue
        for v in variants:
            for r in v["results"]:
                state = "error: " + r["error"] if r.get("error") else "%d objects" % len(r["objects"])
                print("   oracle (%s) %s: %s" % (v["variant"], r["kustomization"], state))
        if name in NOT_COMPARED:
            print("   not compared: %s" % NOT_COMPARED[name])
        else:
            differs = report(d, args, show, variants, ours)
            if differs and name in DOCUMENTED:
                print("   documented: " + DOCUMENTED[name])
                differs = 0
            failed += differs
        if write:
            os.makedirs(os.path.join(HERE, "expected"), exist_ok=True)
            stored = []
            for i, v in enumerate(variants):
                v = dict(v)
                # The objects as `flux build kustomization` prints them (the JSON is the same);
                # the generated kustomization once.
                drop = {"objects"} if i == 0 else {"objects", "generated"}
                v["results"] = [{k: x for k, x in r.items() if k not in drop} for r in v["results"]]
                stored.append(v)
            rec = {
                "case": name,
                "about": " ".join(comments),
                "cmd": args,
                "oracle": "fluxcd/kustomize-controller v1.9.4's build; the sources in versions.txt",
                "variants": stored,
            }
            with open(os.path.join(HERE, "expected", name + ".yaml"), "w") as f:
                f.write("# The Flux oracle's build of %s (tests/flux-oracle/README.md), by\n" % name)
                f.write("# tests/flux-oracle/build.sh && tests/flux-oracle/run.py /tmp/flux-oracle/bin/flux-oracle --write\n")
                yaml.dump(rec, f, Dumper=BlockDumper, sort_keys=False, allow_unicode=True, width=100)
            if version:
                with open(os.path.join(HERE, "expected", "versions.txt"), "w") as f:
                    f.write("\n".join(version) + "\n")
    sys.exit(1 if failed else 0)


main()
