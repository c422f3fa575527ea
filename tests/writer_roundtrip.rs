//! The writer's round trip (issue 49): generated strings, written into changed items by a JSON
//! 6902 patch and by a KOTS template, must read back as the same strings, in our own reader here
//! and, with `WRITER_ROUNDTRIP_KUBECTL` set (`scripts/writer-roundtrip`, run by `scripts/e2e`), in
//! real kustomize (`kubectl kustomize`), which reads YAML with Go's YAML 1.1 rules.
//!
//! The strings are those a writer gets wrong: leading and trailing blanks, tab-only lines, every
//! line break YAML 1.1 or 1.2 knows (CR, CRLF, NEL, U+2028/2029), BOM, C0 and C1 controls, DEL,
//! comment and mapping indicators, document markers at a line start, YAML 1.1 keywords in every
//! case, long lines, empty and blank-only strings, characters beyond the BMP.
//!
//! Kustomize's side needs no YAML reader of ours: each item also holds every string as
//! expected, written with escapes only (so any reader reads it alike), under a key of the same
//! length, and kustomize's own writer must write both keys' values alike.
//!
//! `WRITER_ROUNDTRIP_DUMP=DIR` keeps each path's input and output in `DIR`.

use render_blueprint::doc::{read_yaml_documents, Value};
use std::fmt::Write as _;
use std::process::{Command, Stdio};

/// Generated strings besides the fixed ones.
const GENERATED: usize = 1500;
/// Strings per item: kept moderate so a failure in kustomize names a small item.
const PER_ITEM: usize = 100;

/// splitmix64: a fixed seed gives the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// YAML 1.1 keywords and numbers, each in the cases a reader might take for another type.
fn keywords() -> Vec<String> {
    let words =
        ["y", "n", "yes", "no", "on", "off", "true", "false", "null", "nULL", "tRUE", "~", ".inf", ".NaN", "-.INF"];
    let mut out = Vec::new();
    for word in words {
        out.push(word.to_string());
        out.push(word.to_uppercase());
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_uppercase().chain(chars).collect());
        }
    }
    out.extend(
        ["0644", "0o17", "0x1F", "1e3", "+1", "-.5", "1_000", "12:30", "12:30:45", "0b101", "2001-12-14"]
            .map(String::from),
    );
    out
}

/// Pieces a generated string is made of.
const PIECES: &[&str] = &[
    " ",
    "  ",
    "\t",
    "\t\t",
    " \t",
    "\t ",
    "\n",
    "\n",
    "\n",
    "\r",
    "\r\n",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{FEFF}",
    "\0",
    "\u{1}",
    "\u{7}",
    "\u{8}",
    "\u{b}",
    "\u{c}",
    "\u{1b}",
    "\u{1f}",
    "\u{80}",
    "\u{9f}",
    "\u{7f}",
    "#",
    " #",
    "# ",
    ": ",
    ":",
    "- ",
    "-",
    "? ",
    "?",
    "---",
    "...",
    "--- x",
    "&a",
    "*a",
    "!",
    "!!str",
    "|",
    "|-",
    ">",
    ">+",
    "'",
    "\"",
    "%",
    "%YAML 1.1",
    "@",
    "`",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\\",
    "\\n",
    "word",
    "two words",
    "é",
    "\u{a0}",
    "😀",
    "𝄞",
    "\u{10FFFF}",
    "\u{FFFD}",
    "=",
    "<<",
];

/// Pieces that start a line: what a reader sees at a line start.
const LINE_STARTS: &[&str] = &["---", "...", "--- ", "... ", "#", "- ", "? ", ": ", "\t", " ", "%", "@", "|", ">"];

/// The fixed cases, then seeded random ones.
fn strings() -> Vec<String> {
    let mut out: Vec<String> = [
        "",
        " ",
        "  ",
        "\t",
        "\t\t",
        " \t ",
        "\n",
        "\n\n",
        " \n",
        "\t\n",
        "\n\t",
        "\n \n",
        " \n \n ",
        "\r",
        "\r\n",
        "\tline1\nline2",
        "\tline1\nline2\n",
        "line1\n\tline2",
        "\n\tfoo",
        "\n\n\tfoo\n",
        "\t\n\tfoo",
        " \tfoo\nbar",
        "\t \nfoo",
        "foo\n\t",
        "foo\n\t\n",
        "foo \nbar",
        "foo\nbar ",
        "foo\nbar\t",
        "a\n---\nb",
        "a\n...\nb",
        "---\na",
        "...\n",
        "# c\nx",
        "x\n# c",
        "a: b\nc: d",
        "- a\n- b",
        "\u{FEFF}x\ny",
        "x\u{85}y",
        "x\u{2028}y\nz",
        "x\r\ny\r\n",
        "\u{7f}\n",
        "\u{9f}\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.extend(keywords());
    out.extend(keywords().iter().map(|k| format!("{k}\n")));
    out.push("x".repeat(5000));
    out.push("word ".repeat(400));
    out.push(format!("{}\n{}", "long ".repeat(100), "\tline ".repeat(100)));
    let mut rng = Rng(49);
    let keywords = keywords();
    for _ in 0..GENERATED {
        let mut s = String::new();
        for _ in 0..1 + rng.below(8) {
            match rng.below(10) {
                0 => s.push_str(&keywords[rng.below(keywords.len())]),
                1 => {
                    s.push('\n');
                    s.push_str(rng.pick(LINE_STARTS));
                }
                2 if rng.below(20) == 0 => s.push_str(&"long line ".repeat(30)),
                _ => s.push_str(rng.pick(PIECES)),
            }
        }
        out.push(s);
    }
    out
}

/// `s` as a YAML double-quoted scalar with every character outside printable ASCII escaped:
/// YAML 1.1 and 1.2 readers, ours and Go's, read it alike.
fn escaped(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xFF => {
                let _ = write!(out, "\\x{:02X}", u32::from(c));
            }
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

/// Whether Go's `toJson` writes `s` so that a YAML reader reads its JSON text as `s`: it leaves
/// DEL, the C1 controls and the BOM as they are, which YAML does not read in a scalar.
fn json_reads_back_as_yaml(s: &str) -> bool {
    !s.chars().any(|c| matches!(c, '\u{7f}'..='\u{9f}' | '\u{FEFF}'))
}

/// A key of a fixed length: the expected value's key (`e`) and the written one (`k`) differ in
/// their first letter only, so kustomize's writer places their values at the same column.
fn key(prefix: char, i: usize) -> String {
    format!("{prefix}{i:05}")
}

/// How the strings get into changed items.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// A JSON 6902 patch adds each string to a mapping and to a list.
    Patch,
    /// A KOTS template writes each string (`ConfigOption … | toJson`).
    Template,
}

/// Whether kustomize holds `s` at all: it refuses DEL and the C1 controls but NEL in any
/// resource, however written (escaped too), when it converts the resource for its own
/// processing ("yaml: control characters are not allowed"), and a NEL before `---` or `...`
/// ("found unexpected document indicator": its own writer leaves the NEL as it is, and its
/// reader takes it for a line break). Such strings are in items of their
/// own, named `u…`, which kustomize is not given.
fn kustomize_holds(s: &str) -> bool {
    let marker_after_nel = ["\u{85}---", "\u{85}..."].iter().any(|m| s.contains(m));
    !marker_after_nel && !s.chars().any(|c| matches!(c, '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}'))
}

/// A path's items: name and numbered strings, at most `PER_ITEM` each, those kustomize holds
/// first (items `s…`), then the others (items `u…`).
fn items(path: Path) -> Vec<(String, Vec<(usize, String)>)> {
    let cases: Vec<(usize, String)> = strings()
        .into_iter()
        .enumerate()
        .filter(|(_, s)| matches!(path, Path::Patch) || json_reads_back_as_yaml(s))
        .collect();
    let (held, refused): (Vec<_>, Vec<_>) = cases.into_iter().partition(|(_, s)| kustomize_holds(s));
    let mut out = Vec::new();
    for (prefix, cases) in [('s', held), ('u', refused)] {
        for (n, chunk) in cases.chunks(PER_ITEM).enumerate() {
            out.push((format!("{prefix}{n}"), chunk.to_vec()));
        }
    }
    out
}

/// One ResourceList of `items`, each holding the expected values (`e…`) and, once rendered,
/// the written ones (`k…` in `data`, and in `list` for patches).
fn resource_list(path: Path, items_: &[(String, Vec<(usize, String)>)]) -> String {
    let mut items = String::new();
    let mut config = String::new();
    let mut patches = String::new();
    for (name, chunk) in items_ {
        let n = name;
        let _ = write!(
            items,
            "- apiVersion: example.com/v1\n  kind: Strings\n  metadata:\n    name: {name}\n  expected:\n"
        );
        for (i, s) in chunk {
            let _ = writeln!(items, "    {}: {}", key('e', *i), escaped(s));
        }
        items.push_str("  data:\n    seed: x\n");
        match path {
            Path::Patch => {
                items.push_str("  list:\n  - seed\n");
                let _ = write!(patches, "    - target: {{kind: Strings, name: {n}}}\n      patch: |\n");
                for (i, s) in chunk {
                    let value = escaped(s);
                    let _ = write!(
                        patches,
                        "        - {{op: add, path: /data/{}, value: {value}}}\n        - {{op: add, path: /list/-, value: {value}}}\n",
                        key('k', *i)
                    );
                }
            }
            Path::Template => {
                for (i, s) in chunk {
                    let k = key('k', *i);
                    let _ = writeln!(items, "    {k}: repl{{{{ ConfigOption \"{k}\" | toJson }}}}");
                    let _ = writeln!(config, "      - name: {k}\n        default: {}", escaped(s));
                }
            }
        }
    }
    if !config.is_empty() {
        items = format!(
            "- apiVersion: kots.io/v1beta1\n  kind: Config\n  metadata:\n    name: config\n  spec:\n    groups:\n    - name: g\n      items:\n{config}{items}"
        );
    }
    let spec = if patches.is_empty() { String::new() } else { format!("  spec:\n    patches:\n{patches}") };
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}functionConfig:\n  apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata:\n    name: roundtrip\n{spec}"
    )
}

fn render(input: &str) -> String {
    let mut child = match Command::new(env!("CARGO_BIN_EXE_render-blueprint"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => panic!("cannot run the binary: {err}"),
    };
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        let _ = stdin.write_all(input.as_bytes());
    }
    let output = match child.wait_with_output() {
        Ok(output) => output,
        Err(err) => panic!("the binary did not finish: {err}"),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "render failed: {stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Renders a path's cases and checks them in our reader; returns the output.
fn check_own_reader(path: Path) -> String {
    let items = items(path);
    let input = resource_list(path, &items);
    let output = render(&input);
    if let Some(dir) = std::env::var_os("WRITER_ROUNDTRIP_DUMP") {
        let dir = std::path::Path::new(&dir);
        let _ = std::fs::write(dir.join(format!("{path:?}-input.yaml")), &input);
        let _ = std::fs::write(dir.join(format!("{path:?}-output.yaml")), &output);
    }
    let list = match read_yaml_documents(&output) {
        Ok(mut documents) if documents.len() == 1 => documents.remove(0),
        other => panic!("{path:?}: the output does not read as one document: {other:?}\n{output}"),
    };
    let written: Vec<&Value> = list["items"].as_array().map(|items| items.iter().collect()).unwrap_or_default();
    // A KOTS template stays in the package, excluded; its rendered copy follows.
    let strings: Vec<&Value> = written
        .iter()
        .copied()
        .filter(|item| {
            item["kind"] == "Strings" && item["metadata"]["annotations"]["fn.blueprint.dev/excluded"].is_null()
        })
        .collect();
    let mut wrong = Vec::new();
    for (n, (_, chunk)) in items.iter().enumerate() {
        let item = strings.get(n).copied().unwrap_or(&Value::Null);
        for (at, (i, s)) in chunk.iter().enumerate() {
            let k = key('k', *i);
            let mut read = vec![(format!("data.{k}"), &item["data"][&k])];
            if matches!(path, Path::Patch) {
                read.push((format!("list[{}]", at + 1), &item["list"][at + 1]));
            }
            for (place, value) in read {
                if value.as_str() != Some(s.as_str()) {
                    wrong.push(format!("{place}: wrote {s:?}, read back {value}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{path:?}: {} strings do not read back:\n{}", wrong.len(), wrong.join("\n"));
    output
}

#[test]
fn patched_strings_read_back() {
    let output = check_own_reader(Path::Patch);
    check_kustomize(Path::Patch, &output);
}

#[test]
fn templated_strings_read_back() {
    let output = check_own_reader(Path::Template);
    check_kustomize(Path::Template, &output);
}

/// Each `data`/`expected` key's value as kustomize wrote it (its first line after the key and
/// the lines indented under it), by key without its first letter, for one item. Kustomize's
/// writer leaves NEL, LS and PS as they are, and its reader takes them for line breaks: so do we.
fn values_by_key(item: &str, section: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut inside = false;
    let mut current: Option<String> = None;
    for piece in item.split_inclusive(['\n', '\u{85}', '\u{2028}', '\u{2029}']) {
        let line = piece.trim_end_matches(['\n', '\u{85}', '\u{2028}', '\u{2029}']);
        let line_break = &piece[line.len()..];
        if line.starts_with(|c: char| c.is_ascii_alphabetic()) {
            inside = line == format!("{section}:");
            current = None;
            continue;
        }
        if !inside {
            continue;
        }
        let entry = line.strip_prefix("  ").filter(|rest| !rest.starts_with(' '));
        match entry.and_then(|entry| entry.split_once(':')) {
            Some((k, value)) => {
                let name = k.get(1..).unwrap_or_default().to_string();
                current = Some(name.clone());
                out.insert(name, format!("{value}{line_break}"));
            }
            None => {
                if let Some(value) = current.as_ref().and_then(|name| out.get_mut(name)) {
                    let value: &mut String = value;
                    value.push_str(piece);
                }
            }
        }
    }
    out
}

/// The items of our output that kustomize is given, as we wrote them, in a ResourceList of
/// their own: the rendered `Strings` items it holds (`s…`), not the KOTS templates kept in the
/// package (kustomize refuses two resources of one name before it drops local-config ones).
/// Our writer starts every item of `items` with `- ` at column 0 and writes nothing else there.
fn for_kustomize(output: &str) -> String {
    let mut kept = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    let body = output.split_once("\nitems:\n").map_or("", |(_, body)| body);
    let mut item = String::new();
    let mut flush = |item: &mut String| {
        let ours = item.contains("\n  kind: Strings\n") && item.contains("\n    name: s");
        if ours && !item.contains("fn.blueprint.dev/excluded") {
            kept.push_str(item);
        }
        item.clear();
    };
    for line in body.split_inclusive('\n') {
        if line.starts_with("- ") {
            flush(&mut item);
        } else if !line.starts_with(' ') && !line.trim().is_empty() {
            break;
        }
        item.push_str(line);
    }
    flush(&mut item);
    kept
}

/// With `WRITER_ROUNDTRIP_KUBECTL`, builds our output with `kubectl kustomize` and compares, in
/// each item, how kustomize writes every string we wrote with how it writes the expected one.
fn check_kustomize(path: Path, output: &str) {
    let Some(kubectl) = std::env::var_os("WRITER_ROUNDTRIP_KUBECTL") else {
        eprintln!(
            "{path:?}: kustomize's side skipped (set WRITER_ROUNDTRIP_KUBECTL, as scripts/writer-roundtrip does)"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("writer-roundtrip-{}-{path:?}", std::process::id()));
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("out.yaml"), for_kustomize(output)))
        .and_then(|()| std::fs::write(dir.join("kustomization.yaml"), "resources: [out.yaml]\n"));
    assert!(written.is_ok(), "cannot write {}: {written:?}", dir.display());
    let built = Command::new(kubectl).arg("kustomize").arg(&dir).output();
    let _ = std::fs::remove_dir_all(&dir);
    let built = match built {
        Ok(built) => built,
        Err(err) => panic!("cannot run kubectl: {err}"),
    };
    assert!(
        built.status.success(),
        "{path:?}: kubectl kustomize refuses our output: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let text = String::from_utf8_lossy(&built.stdout);
    if let Some(dump) = std::env::var_os("WRITER_ROUNDTRIP_DUMP") {
        let _ = std::fs::write(std::path::Path::new(&dump).join(format!("{path:?}-kustomize.yaml")), text.as_bytes());
    }
    let mut compared = 0;
    let mut wrong = Vec::new();
    for item in text.split("\n---\n").filter(|item| item.contains("kind: Strings")) {
        let expected = values_by_key(item, "expected");
        let data = values_by_key(item, "data");
        for (name, value) in &expected {
            compared += 1;
            if data.get(name) != Some(value) {
                wrong.push(format!("{name}: expected{value}\n  written{}", data.get(name).map_or("(missing)", |v| v)));
            }
        }
    }
    assert!(wrong.is_empty(), "{path:?}: {} strings read otherwise by kustomize:\n{}", wrong.len(), wrong.join("\n"));
    let cases: usize = items(path).iter().filter(|(name, _)| name.starts_with('s')).map(|(_, c)| c.len()).sum();
    assert_eq!(compared, cases, "{path:?}: kustomize's output holds {compared} strings of {cases}");
    eprintln!("{path:?}: kustomize reads all {compared} strings as written");
}
