//! Random ResourceLists for the differential tests of KRM mode (`krm::differential` in the
//! library, `tests/krm_differential.rs` over the binary): items taken from the golden fixtures and
//! a few written for the purpose, laid out the many ways YAML allows. Plain `std`, so that both
//! test crates include this file; the caller hands in the items.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A deterministic LCG (Knuth's MMIX constants), so a seed names one input for good.
pub struct Rng(pub u64);

impl Rng {
    /// The generator for round `seed` of a hunt: small seeds spread over the whole state.
    pub fn seeded(seed: u64) -> Self {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D);
        rng.next();
        rng
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

/// The fixture files items are taken from: every `input.yaml` and `expected.yaml` under `root`,
/// symlinks skipped (fixtures hold loops and escapes on purpose), in path order, UTF-8 only.
pub fn fixture_texts(root: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && path.file_name().is_some_and(|n| n == "input.yaml" || n == "expected.yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files.into_iter().filter_map(|path| std::fs::read_to_string(&path).ok().map(|text| (path, text))).collect()
}

/// The documents of a plain YAML stream (a `render` output), cut at `---` lines, as texts.
pub fn stream_documents(text: &str) -> Vec<String> {
    let mut documents = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            documents.push(String::new());
        } else if let Some(last) = documents.last_mut() {
            last.push_str(line);
        }
    }
    documents.into_iter().filter(|d| !d.trim().is_empty()).collect()
}

/// Items written for the rules of docs/krm.md ("YAML and JSON"): each a block mapping at column
/// 0, ending in a line break.
pub const SYNTHETIC: &[&str] = &[
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scalars\ndata:\n  a: |\n    line\n\n    more\n  b: |-\n    x\n  \
     c: |+\n    keep\n\n  d: >2\n     indented\n    less\n  e: >-\n    folded\n    text\n  f: |2-\n      deeper\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow, labels: {a: '1', \"b\": \"2\"}}\nlist: [1, 2, {x: y}, [z]]\nempty: {}\nnone: []\n",
    "\"apiVersion\": v1\n'kind': Quoted\nmetadata:\n  \"name\": q\n  'namespace': ns\n\"key with spaces\": 1\n",
    "apiVersion: v1\nkind: Anchored\nmetadata:\n  name: a\nx: &a {k: v}\ny: *a\n",
    "apiVersion: v1\nkind: Tagged\nmetadata:\n  name: t\nx: !!str 123\ny: !custom v\nz: !!binary aGVsbG8=\n",
    "apiVersion: v1\nkind: Complex\nmetadata:\n  name: c\n? complex\n: value\n? [a, b]\n: list key\n",
    "apiVersion: v1\nkind: Duplicate\nmetadata:\n  name: d\nx: 1\nx: 2\n",
    "apiVersion: v1\nkind: Numbers\nmetadata:\n  name: n\nbig: 12345678901234567890\nok: 123456789012345678\nneg: -9223372036854775808\nq: \"12345678901234567890123\"\n",
    "apiVersion: v1\nkind: Unicode\nmetadata:\n  name: u\nplain: héllo wörld ✓\nemoji: 🎉\nnbsp: a\u{a0}\nnel: \"a\u{85}b\"\nls: x\u{2028}y\nideo: z\u{3000}\n",
    "apiVersion: v1\nkind: Merge\nmetadata:\n  name: m\nbase: {a: 1}\n<<: {b: 2}\n",
    "apiVersion: v1\nkind: Words\nmetadata:\n  name: w\non: yes\n1: one\nnull: n\ntrue: t\n",
    "apiVersion: v1\nkind: Floats\nmetadata:\n  name: f\ninf: .inf\nnan: .NaN\nneg: -.Inf\nhuge: 1e999\n",
    "apiVersion: v1\nkind: Spellings\nmetadata:\n  name: o\nmode: 0644\nhex: 0x1F\noct: 0o17\nexp: 1e3\ntime: 12:30\nfloat: 1.50\nunder: 1_000\ndot: .5\nsign: +1\n",
    "apiVersion: v1\nkind: Plain\nmetadata:\n  name: p\nplain: multi\n  line plain\n  scalar\nafter: x\n",
    "apiVersion: v1\nkind: Empty\nmetadata:\n  name: e\nempty:\ntilde: ~\nnull_word: null\nspace: ' '\n",
    "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cron # namespaces & CRDs\nspec:\n  schedule: \"5 10 * * 1\"\n  \
     cmd: a && b\n  star: a *b\n  amp: x &y\n",
    "apiVersion: v1\nkind: Lists\nmetadata:\n  name: l\nlist:\n- a\n- b\nnested:\n  - - x\n    - y\n  -\n    k: v\n  - \n",
    "apiVersion: v1\nkind: Quotes\nmetadata:\n  name: q2\ns: 'it''s'\nd: \"tab\\there\\u00e9 \\\"q\\\"\"\nfolded: \"a\n  b\"\nsq: 'x\n\n  y'\n",
    "apiVersion: v1\nkind: Markers\nmetadata:\n  name: z\nx: |\n  # not a comment\n  - not an item\n  ---\n  ...\n  %YAML 1.2\n",
    "apiVersion: v1\nkind: Tabs\nmetadata:\n  name: tabs\ndata:\n  t: a\tb\n  u: \"\\t\"\n  v: |\n    \tindented by a tab\n",
    "apiVersion: v1\nkind: Deep\nmetadata:\n  name: deep\nx: {a: {b: {c: {d: {e: [[[[1]]]]}}}}}\n",
    "apiVersion: v1\nkind: Comments\nmetadata:\n  name: cm # trailing\n# between keys\ndata: # after a key\n  # before\n  k: v # end\n\n  # after a blank line\n",
    "apiVersion: v1\nkind: Trailing\nmetadata:\n  name: tr\ndata:\n  s: |\n    two spaces  \n  t: >-\n    tab\t\n  u: |\n    x\n      \n",
    "apiVersion: v1\nkind: KeepLast\nmetadata:\n  name: keep\ndata:\n  s: |+\n    kept\n\n",
    "apiVersion: v1\nkind: Indicators\nmetadata:\n  name: ind\ndata:\n  a: |4\n        four\n  b: >+\n    fold keep\n\n  c: |1-\n   one\n",
    "apiVersion: v1\nkind: ColonSpace\nmetadata:\n  name: cs\nurl: http://example.com:8080/x\nk8s: a:b\nq: \"a: b\"\nhash: a#b\n",
    "apiVersion: v1\nkind: Long\nmetadata:\n  name: long\nkey: 1234567890123456789\nip: 10.0.0.1\nversion: 1.2.3\ndate: 2001-12-14\n",
];

/// The items of [`SYNTHETIC`] the fast reading takes as they are.
pub const TAME: &[usize] = &[1, 2, 8, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 25];

/// A few anchored values an input may define before its items, which items then alias.
const ANCHORS: &[&str] = &["&shared {k: v}", "&text some text", "&num 42", "&list [a, b]"];
const ALIASES: &[&str] = &["*shared", "*text", "*num", "*list"];

const COMMENTS: &[&str] = &[
    "# a comment",
    "# namespaces & CRDs",
    "# *not an alias",
    "#",
    "# - looks: like an item",
    "# ---",
    "# ü ✓",
    "# items:",
];

/// One item's text (a block mapping at column 0) with its layout changed: comments, blank lines,
/// whitespace at line ends, tabs, quoted keys, anchors, tags and other keys added here and there.
pub fn perturb_item(rng: &mut Rng, item: &str, n: usize, wild: bool) -> String {
    let mut lines: Vec<String> = item.split_inclusive('\n').map(str::to_string).collect();
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        if let Some(last) = lines.last_mut() {
            last.push('\n');
        }
    }
    let edits = if rng.chance(40) { 0 } else { 1 + rng.below(4) };
    for _ in 0..edits {
        if lines.is_empty() {
            break;
        }
        let at = rng.below(lines.len());
        let indent = lines[at].len() - lines[at].trim_start_matches(' ').len();
        // Tame rounds keep to what the fast reading takes (comments, blank lines, whitespace,
        // quoted keys, tabs in values, block scalars but `|+`, flow collections).
        let edit = if wild { rng.below(16) } else { *rng.pick(&[0, 1, 2, 3, 4, 5, 6, 8, 9, 13, 14, 15]) };
        match edit {
            // A comment after the line, at its indentation, at column 0 or deeper.
            0 | 1 => {
                let column = *rng.pick(&[0, indent, indent + 2, 1]);
                let comment = rng.pick(COMMENTS);
                lines.insert(at + 1, format!("{}{comment}\n", " ".repeat(column)));
            }
            // Blank lines, or lines of spaces.
            2 => lines.insert(at + 1, "\n".into()),
            3 => lines.insert(at + 1, format!("{}\n", " ".repeat(rng.below(6)))),
            // Whitespace at the end of a line.
            4 | 5 => {
                let tail = *rng.pick(&["  ", " ", "\t", " \t "]);
                let line = &mut lines[at];
                line.insert_str(line.len() - 1, tail);
            }
            // A comment at the end of a line.
            6 => {
                let line = &mut lines[at];
                line.insert_str(line.len() - 1, " # end & *x");
            }
            // A tab after a key's colon, or in a value.
            7 => {
                if let Some(colon) = lines[at].find(": ") {
                    lines[at].replace_range(colon + 1..colon + 2, "\t");
                }
            }
            8 => {
                // In a plain value (`key: value`), or anywhere in wild rounds.
                let line = &mut lines[at];
                let plain = line.find(": ").is_some_and(|c| line[c + 2..].starts_with(|ch: char| ch.is_alphanumeric()));
                if wild || (plain && !line.contains('#')) {
                    line.insert_str(line.len() - 1, "\tx");
                }
            }
            // A quoted key.
            9 => {
                let line = &lines[at];
                if let Some(colon) = line.find(':') {
                    let key = &line[indent..colon];
                    if !key.is_empty() && !key.contains(['"', '\'', '#', '-', '{', '[', '?']) {
                        let quote = if rng.chance(50) { '"' } else { '\'' };
                        let quoted = format!("{}{quote}{key}{quote}{}", &line[..indent], &line[colon..]);
                        lines[at] = quoted;
                    }
                }
            }
            // An anchor on a value and an alias to it in a key added after it.
            10 => {
                let line = &lines[at];
                if let Some(colon) = line.find(": ") {
                    let anchored = format!("{}&a{n} {}", &line[..colon + 2], &line[colon + 2..]);
                    lines[at] = anchored;
                    lines.push(format!("alias{n}: *a{n}\n"));
                }
            }
            // A tag on a value.
            11 => {
                if let Some(colon) = lines[at].find(": ") {
                    let tag = *rng.pick(&["!!str ", "!custom ", "!<tag:yaml.org,2002:str> ", "! "]);
                    lines[at].insert_str(colon + 2, tag);
                }
            }
            // Keys at the item's own level: odd ones.
            12 => {
                let extra = *rng.pick(&[
                    "? complex\n: value\n",
                    "kind: Again\n",
                    "digits: 12345678901234567890\n",
                    "digits: \"1234567890123456789\"\n",
                    "on: off\n",
                    "\"1\": one\n",
                    "nel: a\u{85}b\n",
                    "bom: \"\u{feff}\"\n",
                    "inf: -.inf\n",
                    "extra: [a, {b: c}]\n",
                    "lone: a\rb\n",
                    "ws: \u{a0}\n",
                    "key with spaces: v\n",
                    "'single': \"double\"\n",
                    "<<: {m: 1}\n",
                ]);
                lines.push(extra.into());
            }
            // A block scalar added at the end.
            13 => {
                let indicators: &[&str] = if wild {
                    &["|", "|-", "|+", ">", ">-", ">2", "|2+", ">+"]
                } else {
                    &["|", "|-", ">", ">-", ">2", "|4-"]
                };
                let indicator = *rng.pick(indicators);
                let body =
                    *rng.pick(&["    x\n", "    x\n\n", "    x  \n    y\n", "     deeper\n    x\n", "    x\n  \n"]);
                lines.push(format!("block{n}: {indicator}\n{body}"));
            }
            // A flow collection over several lines.
            14 => lines.push(format!("flow{n}: [a,\n  b, {{c: d,\n  e: f}}]\n")),
            // A space at the end of a line.
            _ => {
                let line = &mut lines[at];
                line.insert(line.len() - 1, ' ');
            }
        }
    }
    lines.concat()
}

/// How one generated list is laid out, for the report of a failing seed.
#[derive(Debug, Default, Clone)]
pub struct Layout {
    pub dash_column: usize,
    pub big: bool,
    pub crlf: bool,
    pub flow: bool,
    pub wild: bool,
}

/// A ResourceList (or `kind: List`) of items drawn from `pool`, laid out at random; `big` makes
/// it larger than the two-thread split (256 KiB).
pub fn resource_list(rng: &mut Rng, pool: &[String], big: bool) -> (String, Layout) {
    // Most rounds stay where the fast reading runs; the others use everything.
    let wild = rng.chance(30);
    let mut layout = Layout { big, wild, ..Layout::default() };
    let mut text = String::new();
    if rng.chance(3) {
        text.push('\u{feff}');
    }
    let starts: &[&str] = if wild {
        &[
            "",
            "",
            "# leading comment\n",
            "---\n",
            "%YAML 1.2\n---\n",
            "# only a comment\n---\n",
            "%TAG !e! tag:example.com,2000:\n---\n",
            "--- \n",
        ]
    } else {
        &["", "", "", "", "", "# leading comment\n", "---\n", "--- # start\n", "\n\n", "--- \n"]
    };
    let start = starts[rng.below(starts.len())];
    text.push_str(start);
    let cross = wild && rng.chance(25);
    let pad = *rng.pick(&[0, 0, 2, 2, 4, 1, 3]);
    layout.dash_column = pad;
    let items = items_block(rng, pool, big, pad, cross, wild, &mut layout);
    let (api_version, kind) = if rng.chance(90) {
        (
            *rng.pick(&["config.kubernetes.io/v1", "\"config.kubernetes.io/v1\"", "config.kubernetes.io/v1beta1"]),
            "ResourceList",
        )
    } else {
        ("v1", "List")
    };
    let mut keys = vec![format!("apiVersion: {api_version}\n"), format!("kind: {kind}\n")];
    if rng.chance(50) {
        keys.swap(0, 1);
    }
    if cross {
        // Defined before the items (an alias before its anchor is an error both readers report).
        let defined: String = ANCHORS.iter().enumerate().map(|(i, a)| format!("anchor{i}: {a}\n")).collect();
        keys.insert(rng.below(keys.len() + 1), defined);
    }
    let config = function_config(rng);
    let at = rng.below(keys.len() + 1);
    let after_items = rng.chance(60);
    let mut body: Vec<String> = keys;
    let items_at = if after_items { body.len() } else { at };
    body.insert(items_at, items);
    if let Some(config) = config {
        // After the items mostly; sometimes before them.
        let place = if rng.chance(75) { body.len() } else { rng.below(body.len() + 1) };
        body.insert(place, config);
    }
    if rng.chance(20) {
        let results = *rng.pick(&[
            "results:\n- message: old\n  severity: info\n",
            "results: []\n",
            "results:\n  - message: \"x\"\n",
        ]);
        body.push(results.into());
    }
    if rng.chance(10) {
        body.push(rng.pick(&["other: x\n", "# a comment after everything\n", "zzz: [1, 2]\n", "\n\n"]).to_string());
    }
    for part in body {
        text.push_str(&part);
    }
    text.push_str(rng.pick::<&str>(&["", "", "", "", "...\n", "---\n", "\n\n", "# trailing\n", "...\n# after\n"]));
    if rng.chance(3) {
        while text.ends_with('\n') {
            text.pop();
        }
    }
    if rng.chance(8) {
        layout.crlf = true;
        text = text.replace("\r\n", "\n").replace('\n', "\r\n");
    } else if wild && rng.chance(5) {
        // One carriage return alone somewhere.
        let at = rng.below(text.len());
        if let Some(at) = (at..text.len()).find(|&i| text.is_char_boundary(i) && text[i..].starts_with('\n')) {
            text.insert(at, '\r');
            text.remove(at + 1);
        }
    }
    (text, layout)
}

fn function_config(rng: &mut Rng) -> Option<String> {
    if rng.chance(50) {
        return None;
    }
    Some(
        rng.pick(&[
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: function-input\n",
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: function-input\n  data: {}\n",
            "functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: fn}}\n",
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n    a: |\n      x\n",
            "functionConfig: ~\n",
            "# before the config\nfunctionConfig:\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: indented}\n",
        ])
        .to_string(),
    )
}

/// `items:` and its elements, at `pad` columns.
fn items_block(
    rng: &mut Rng,
    pool: &[String],
    big: bool,
    pad: usize,
    cross: bool,
    wild: bool,
    layout: &mut Layout,
) -> String {
    let mut out = String::from("items:");
    if rng.chance(5) {
        out.push_str(" # the items");
    }
    if !big && rng.chance(4) {
        out.push_str(" []\n");
        return out;
    }
    out.push('\n');
    if !big && rng.chance(4) {
        // A flow list of items, on one line or several.
        layout.flow = true;
        let n = rng.below(3);
        let elements: Vec<String> =
            (0..n).map(|i| format!("{{kind: K{i}, metadata: {{name: f{i}}}, v: [1, 'x']}}")).collect();
        return format!("items: [{}]\n", elements.join(if rng.chance(50) { ", " } else { ",\n  " }));
    }
    let count = if big { usize::MAX } else { rng.below(8) };
    let margin = " ".repeat(pad);
    let mut n = 0;
    while n < count {
        if big && out.len() > (300 << 10) {
            break;
        }
        if pool.is_empty() {
            break;
        }
        let item = match rng.below(100) {
            0..15 if wild => rng.pick(SYNTHETIC).to_string(),
            0..10 => SYNTHETIC[*rng.pick(TAME)].to_string(),
            _ => rng.pick(pool).clone(),
        };
        let mut item = if big && rng.chance(80) { item } else { perturb_item(rng, &item, n, wild) };
        if cross && rng.chance(30) {
            item.push_str(&format!("ref{n}: {}\n", rng.pick(ALIASES)));
        }
        // Between elements: blank lines, comments at any column.
        if rng.chance(15) {
            match rng.below(4) {
                0 => out.push('\n'),
                1 => out.push_str(&format!(
                    "{}{}\n",
                    " ".repeat(*rng.pick(&[0, pad, pad + 2, pad + 4])),
                    rng.pick(COMMENTS)
                )),
                2 => out.push_str(&format!("{}\n", " ".repeat(rng.below(pad + 4)))),
                _ => out.push_str(&format!("{margin}# between\n\n")),
            }
        }
        // The dash: `- `, more spaces after it, or alone on its line.
        let (dash, rest) = match rng.below(20) {
            0 => (format!("{margin}-   "), " ".repeat(pad + 4)),
            1 => (format!("{margin}-\n{margin}  "), " ".repeat(pad + 2)),
            2 if pad > 0 && wild => (format!("{}- ", " ".repeat(pad - 1)), " ".repeat(pad + 1)),
            _ => (format!("{margin}- "), " ".repeat(pad + 2)),
        };
        out.push_str(&dash);
        for (i, line) in item.split_inclusive('\n').enumerate() {
            if i > 0 && line != "\n" && line != "\r\n" {
                out.push_str(&rest);
            }
            out.push_str(line);
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        n += 1;
    }
    out
}
