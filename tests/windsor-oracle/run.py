#!/usr/bin/env python3
"""Runs the Windsor oracle (build.sh) over the matrix of windsorcli/core contexts and options.

    tests/windsor-oracle/run.py ORACLE_BINARY [CORE_TEMPLATE_DIR] [--write] [CASE...]

CORE_TEMPLATE_DIR defaults to tests/fixtures/features/windsor-core/contexts/_template (windsorcli/core
at the commit its README names). For each case of matrix.yaml (or only the CASEs named) it writes
the case's values.yaml (and its `blueprint` as contexts/<context>/blueprint.yaml) and runs the oracle for the case's context, as `windsor show blueprint --raw`
composes it. Without --write it compares the oracle's answer with expected/<case>.yaml and says
which differ (exit 1 if any); --write stores the answers there, and the oracle's build versions in
expected/versions.txt. A composition that fails is stored as `error: <message>`. A case with
`kustomizations: true` also records, after the Blueprint, each Flux Kustomization as
`windsor show kustomization <name>` prints it.
tests/windsor_matrix.rs reads the stored answers in cargo test.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPLATE = os.path.join(ROOT, "tests/fixtures/features/windsor-core/contexts/_template")
EXPECTED = os.path.join(HERE, "expected")


def case_inputs(case, template):
    """The case's values and the env() variables it gives."""
    if "testCase" not in case:
        return case.get("values") or {}, {}
    file, name = case["testCase"].split("/", 1)
    with open(os.path.join(template, "tests", file + ".test.yaml")) as f:
        tests = yaml.safe_load(f)
    for c in tests["cases"]:
        if c["name"] == name:
            values = dict(c.get("values") or {})
            values.pop("context", None)
            return values, {k: str(v) for k, v in (c.get("env") or {}).items()}
    raise SystemExit(f"{case['name']}: no case {name!r} in {file}.test.yaml")


def run_case(oracle, template, case, tmp):
    values, env = case_inputs(case, template)
    path = os.path.join(tmp, "values.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(values, f, sort_keys=False)
    cmd = [oracle]
    if case.get("kustomizations"):
        cmd.append("--kustomizations")
    for k, v in sorted(env.items()):
        cmd += ["--env", f"{k}={v}"]
    cmd += [template, case["context"], path]
    if case.get("blueprint") is not None:
        blueprint = os.path.join(tmp, "blueprint.yaml")
        with open(blueprint, "w") as f:
            yaml.safe_dump(case["blueprint"], f, sort_keys=False)
        cmd.append(blueprint)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    if proc.returncode == 0:
        return proc.stdout
    text = proc.stdout
    if text.startswith("error: "):
        message = text[len("error: "):].rstrip("\n").replace("\n  ", "\n")
    else:
        message = f"exit {proc.returncode}: {proc.stderr.strip()}"
    return yaml.safe_dump({"error": message}, sort_keys=False, width=1000)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    write = "--write" in sys.argv
    if not args:
        raise SystemExit(__doc__)
    oracle = os.path.abspath(args[0])
    template = TEMPLATE
    if len(args) > 1 and os.path.isdir(args[1]):
        template = os.path.abspath(args[1])
        args = args[1:]
    only = set(args[1:])
    with open(os.path.join(HERE, "matrix.yaml")) as f:
        cases = yaml.safe_load(f)["cases"]
    os.makedirs(EXPECTED, exist_ok=True)
    same = differ = failed = 0
    tmp = tempfile.mkdtemp(prefix="windsor-matrix-")
    try:
        for case in cases:
            if only and case["name"] not in only:
                continue
            out = run_case(oracle, template, case, tmp)
            if out.startswith("error:"):
                failed += 1
            target = os.path.join(EXPECTED, case["name"] + ".yaml")
            if write:
                with open(target, "w") as f:
                    f.write(out)
                continue
            old = open(target).read() if os.path.exists(target) else None
            if old == out:
                same += 1
            else:
                differ += 1
                print(f"differs: {case['name']}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if write:
        version = os.path.join(os.path.dirname(oracle), "windsor-oracle.version")
        if os.path.exists(version):
            shutil.copy(version, os.path.join(EXPECTED, "versions.txt"))
        print(f"wrote {len(only) or len(cases)} cases ({failed} compose with an error)")
        return 0
    print(f"{same} same, {differ} differ from expected/ ({failed} compose with an error)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
