//! The YAML test suite's single-document cases with a JSON expectation (tests/data/yaml-test-suite,
//! ported by scripts/port-yaml-test-suite), each embedded in an item at several indentations:
//! passed through, the list comes back byte for byte; with a JSON 6902 patch elsewhere in the
//! item, and with a Flux substitution elsewhere in it, the embedded data still reads as the
//! suite's JSON says. The data a step did not touch must never change, whatever its layout.

use std::path::{Path, PathBuf};

/// Cases whose item, unchanged, is written from its values rather than copied (docs/krm.md:
/// items that cannot stand alone); their data must still read as the suite says.
const REWRITTEN: &[(&str, &str)] = &[
    ("26DV", ANCHORS),
    ("2SXE", ANCHORS),
    ("3GZX", ANCHORS),
    ("3R3P", ANCHORS),
    ("6KGN", ANCHORS),
    ("7BMT", ANCHORS),
    ("7BUB", ANCHORS),
    ("8XYN", ANCHORS),
    ("BU8L", ANCHORS),
    ("CN3R", ANCHORS),
    ("CUP7", ANCHORS),
    ("E76Z", ANCHORS),
    ("F2C7", ANCHORS),
    ("HMQ5", ANCHORS),
    ("JS2J", ANCHORS),
    ("LE5A", ANCHORS),
    ("SKE5", ANCHORS),
    ("U3XV", ANCHORS),
    ("V55R", ANCHORS),
    ("W5VH", ANCHORS),
    ("Y2GN", ANCHORS),
    ("ZH7C", ANCHORS),
    ("ZWK4", ANCHORS),
];
const ANCHORS: &str = "anchors and aliases";

/// Where the embedded document's key sits and where its lines start: the key as the item's own
/// (column 2), one level down, one level down with content at an odd column, and deep.
const PLACES: [(&str, usize); 4] = [
    ("  payload:\n", 4),
    ("  spec:\n    payload:\n", 6),
    ("  spec:\n    payload:\n", 5),
    ("  spec:\n     nested:\n          payload:\n", 13),
];

struct Case {
    id: String,
    yaml: String,
    json: serde_json::Value,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yaml-test-suite");
    let mut ids: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_dir())
        .collect();
    ids.sort();
    ids.iter()
        .map(|path| {
            let read = |file: &str| {
                std::fs::read_to_string(path.join(file)).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
            };
            let json = serde_json::from_str(&read("in.json")).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            let id = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            Case { id, yaml: read("in.yaml"), json }
        })
        .collect()
}

/// Whether a line is a document marker (`---` or `...` at column 0, alone or before a space).
fn marker(line: &str, mark: &str) -> bool {
    line.strip_prefix(mark).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\n', '\r']))
}

/// A comment or blank line.
fn nothing(line: &str) -> bool {
    let trimmed = line.trim_start_matches([' ', '\t']);
    trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "\n" || trimmed == "\r\n"
}

/// The document's lines indented by `column`, as a mapping value, or why it cannot be one.
fn embed(yaml: &str, column: usize) -> Result<String, &'static str> {
    // The item's next line gives the document a final line break: that changes only a block
    // scalar that keeps or clips its last line break (`|`, `|+`, `>`), not `|-`.
    let yaml = if yaml.is_empty() || yaml.ends_with('\n') {
        yaml.to_owned()
    } else if yaml.match_indices(['|', '>']).any(|(at, _)| !yaml[at + 1..].starts_with('-')) {
        return Err("no line break at the end, and a block scalar whose value the item's next line would change");
    } else {
        format!("{yaml}\n")
    };
    let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
    let mut body: Vec<&str> = Vec::new();
    let mut started = false;
    let mut ended = false;
    for (i, line) in lines.iter().enumerate() {
        if ended {
            if !nothing(line) {
                return Err("text after the document's end marker");
            }
            continue;
        }
        if line.starts_with('%') && !started && lines[i..].iter().any(|line| marker(line, "---")) {
            return Err("a directive (%YAML, %TAG) stands before a document, never inside an item");
        }
        if marker(line, "---") {
            if started || body.iter().any(|line| !nothing(line)) {
                return Err("a document marker inside the document");
            }
            let rest = line[3..].trim_start_matches([' ', '\t']);
            if !(rest.is_empty() || rest.starts_with('#') || rest.starts_with(['\n', '\r'])) {
                return Err("content on the --- line: as a mapping value its indentation would change");
            }
            started = true;
            body.clear();
            continue;
        }
        if marker(line, "...") {
            ended = true;
            continue;
        }
        body.push(line);
    }
    let pad = " ".repeat(column);
    Ok(body.iter().map(|line| format!("{pad}{line}")).collect())
}

/// One item, its document as `payload`, placed as `PLACES[place]` says.
fn item(case: &Case, embedded: &str, place: usize, annotation: &str) -> String {
    format!(
        "- apiVersion: example.com/v1\n  kind: Sample\n  metadata:\n    name: case-{}\n    annotations:\n      \
         note: {annotation}\n{}{embedded}",
        case.id.to_lowercase(),
        PLACES[place].0
    )
}

/// A list of one item per case, and the functionConfig.
fn list(cases: &[(&Case, String)], place: usize, annotation: &str, config: &str, copies: usize) -> String {
    let mut text = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for _ in 0..copies {
        for (case, embedded) in cases {
            text.push_str(&item(case, embedded, place, annotation));
        }
    }
    text.push_str(config);
    text
}

fn run(input: &str) -> (Option<i32>, String, String) {
    let output = assert_cmd::Command::cargo_bin("render-blueprint")
        .unwrap_or_else(|err| panic!("{err}"))
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING")
        .write_stdin(input.to_owned())
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Equal as JSON data: numbers by value (the suite writes `1.0` where a reader may keep `1`).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => x == y || x.as_f64().zip(y.as_f64()).is_some_and(|(x, y)| x == y),
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Object(x), Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

/// The payload of each item of a written list, by case.
fn payloads(output: &str, place: usize) -> Result<Vec<(serde_json::Value, serde_json::Value)>, String> {
    let documents = render_blueprint::doc::read_yaml_documents(output).map_err(|err| format!("{err:?}"))?;
    let items = documents.first().and_then(|list| list["items"].as_array()).ok_or("no items")?;
    Ok(items
        .iter()
        .map(|item| {
            let payload = match place {
                0 => &item["payload"],
                3 => &item["spec"]["nested"]["payload"],
                _ => &item["spec"]["payload"],
            };
            (item["metadata"].clone(), payload.clone())
        })
        .collect())
}

const PATCH: &str = "functionConfig:\n  apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata:\n    \
                     name: suite\n  spec:\n    patches:\n    - target: {kind: Sample}\n      patch: |\n        - op: add\n          \
                     path: /metadata/labels\n          value: {patched: \"yes\"}\n";
const SUBSTITUTE: &str =
    "functionConfig:\n  apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata:\n    \
                          name: suite\n  spec:\n    substitute:\n      v: done\n";

/// Runs one check over all `cases` at `place`, in a list holding them `copies` times; returns
/// the ids that failed, and why.
fn check(cases: &[(&Case, String)], place: usize, kind: &str, copies: usize) -> Vec<String> {
    let (annotation, config) = match kind {
        "passthrough" => ("kept", ""),
        "patch" => ("kept", PATCH),
        _ => ("${v}", SUBSTITUTE),
    };
    let input = list(cases, place, annotation, config, copies);
    let (code, stdout, stderr) = run(&input);
    if code != Some(0) {
        // Find the cases that fail on their own.
        if cases.len() > 1 {
            return cases.iter().flat_map(|case| check(std::slice::from_ref(case), place, kind, 1)).collect();
        }
        return vec![format!("{} ({kind}, place {place}): exit {code:?}: {}", cases[0].0.id, stderr.trim())];
    }
    let mut failed = Vec::new();
    if kind == "passthrough" {
        for (case, embedded) in cases {
            let written = REWRITTEN.iter().any(|(id, _)| *id == case.id);
            match (written, stdout.contains(&item(case, embedded, place, annotation))) {
                (false, false) => {
                    failed.push(format!("{} ({kind}, place {place}): not written back byte for byte", case.id))
                }
                (true, true) => {
                    failed.push(format!("{} ({kind}, place {place}): copied now: take it off REWRITTEN", case.id))
                }
                _ => {}
            }
        }
    }
    match payloads(&stdout, place) {
        Err(err) => failed.push(format!("{kind}, place {place}: the output does not read: {err}")),
        Ok(read) => {
            if read.len() != cases.len() * copies {
                failed.push(format!(
                    "{kind}, place {place}: {} items written, {} read",
                    read.len(),
                    cases.len() * copies
                ));
            }
            for ((case, _), (metadata, payload)) in cases.iter().cycle().zip(&read) {
                let stepped = match kind {
                    "patch" => metadata["labels"]["patched"] == "yes",
                    "substitution" => metadata["annotations"]["note"] == "done",
                    _ => true,
                };
                if !stepped {
                    failed.push(format!("{} ({kind}, place {place}): the step did not run: {metadata}", case.id));
                } else if !same(payload, &case.json) {
                    failed.push(format!(
                        "{} ({kind}, place {place}): read {payload}, the suite says {}",
                        case.id, case.json
                    ));
                }
            }
        }
    }
    failed
}

#[test]
fn the_yaml_test_suite_keeps_its_data_in_items() {
    let all = cases();
    assert!(all.len() >= 250, "the ported cases are missing: {}", all.len());
    let mut failed = Vec::new();
    let mut left_out = Vec::new();
    let mut checked = 0;
    for (place, &(_, column)) in PLACES.iter().enumerate() {
        let mut embedded = Vec::new();
        for case in &all {
            match embed(&case.yaml, column) {
                Ok(text) => embedded.push((case, text)),
                Err(why) => left_out.push(format!("{}: {why}", case.id)),
            }
        }
        // A `${` in the document is Flux's to substitute: only the other two checks hold there.
        let substitutable: Vec<(&Case, String)> =
            embedded.iter().filter(|(case, _)| !case.yaml.contains('$')).cloned().collect();
        checked = embedded.len();
        // Small lists, and one over 256 KiB, which is read in parts on two threads.
        let copies = if place == 1 { 8 } else { 1 };
        failed.extend(check(&embedded, place, "passthrough", copies));
        failed.extend(check(&embedded, place, "patch", copies));
        failed.extend(check(&substitutable, place, "substitution", copies));
    }
    left_out.sort();
    left_out.dedup();
    let dollars: Vec<&str> = all.iter().filter(|case| case.yaml.contains('$')).map(|case| case.id.as_str()).collect();
    eprintln!(
        "{checked} of {} cases checked at {} places ({} without the substitution check, a `$` in them: {}); left out:\n{}",
        all.len(),
        PLACES.len(),
        dollars.len(),
        dollars.join(", "),
        left_out.join("\n")
    );
    assert!(failed.is_empty(), "{} failures:\n{}", failed.len(), failed.join("\n"));
    // tests/data/yaml-test-suite/README.md lists the cases left out: keep it in step.
    assert_eq!((checked, left_out.len()), (218, 38), "the cases checked and left out changed");
}
