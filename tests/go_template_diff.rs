//! The differential test of Go templates against real Go and Sprig (issue 35). Go's side comes
//! from `tests/gotemplate/runner.go` (built and run by `scripts/go-template-diff`), which writes
//! each case with what Go made of it on both paths: Landscaper's (`{{ }}`, data, missingkey=zero)
//! and KOTS's (`repl{{ }}`, no data). This runs the same cases through our two paths and reports
//! every difference: the documented ones (docs/templates.md) by rule, not counted, the others by
//! cause; any of those fails.
//!
//! Without `GO_TEMPLATE_DIFF` (the runner's output) it says so and passes: `cargo test` alone has
//! no Go to compare with.

use render_blueprint::doc::Value;
use render_blueprint::imports::gotemplate::{to_go_json, Descriptors, GoTemplates};
use render_blueprint::limits::Budget;
use render_blueprint::package::MemoryFiles;
use render_blueprint::repeat::kots::{statics, Engine};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a path made of a case: the text, or an error.
#[derive(Debug, PartialEq)]
enum Outcome {
    Text(String),
    Error(String),
}

/// A documented difference: its rule, the phrase that names it in docs/templates.md, and the
/// test that recognizes it.
struct Rule {
    name: &'static str,
    doc: &'static str,
    applies: fn(src: &str, go: &Outcome, ours: &Outcome) -> bool,
}

const RULES: &[Rule] = &[
    Rule { name: "float printing", doc: "A whole `float64` prints as an integer", applies: float_printing },
    Rule { name: "field of nil", doc: "A field of a missing or null value", applies: field_of_nil },
];

/// Go prints a whole float64 in exponent form (`1e+06`) where we print the integer.
fn float_printing(_: &str, go: &Outcome, ours: &Outcome) -> bool {
    let (Outcome::Text(go), Outcome::Text(ours)) = (go, ours) else { return false };
    go.contains("e+") && whole_floats_as_integers(go) == *ours
}

fn whole_floats_as_integers(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < text.len() {
        // A number in Go's %v exponent form: digits, an optional fraction, e+NN.
        let start = i;
        let mut j = i;
        if bytes[j] == b'-' && j + 1 < bytes.len() && bytes[j + 1].is_ascii_digit() {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() && (start == 0 || !bytes[start - 1].is_ascii_digit()) {
            let mut k = j;
            while k < bytes.len() && (bytes[k].is_ascii_digit() || bytes[k] == b'.') {
                k += 1;
            }
            if k + 2 < bytes.len() && bytes[k] == b'e' && bytes[k + 1] == b'+' && bytes[k + 2].is_ascii_digit() {
                let mut end = k + 2;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                if let Ok(f) = text[start..end].parse::<f64>() {
                    if f.fract() == 0.0 && f.abs() < 1e21 {
                        out.push_str(&format!("{f:.0}"));
                        i = end;
                        continue;
                    }
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Go stops at a field of nil (`nil pointer evaluating interface {}.b`); we print `<no value>`.
fn field_of_nil(_: &str, go: &Outcome, ours: &Outcome) -> bool {
    matches!(go, Outcome::Error(e) if e.contains("nil pointer evaluating")) && matches!(ours, Outcome::Text(_))
}

/// The likely cause of an undocumented difference, from what the template uses (the first that
/// applies, in the order of issue 35's list).
fn cause(src: &str, go: &Outcome, ours: &Outcome) -> String {
    let uses = |word: &str| {
        src.match_indices(word).any(|(at, _)| {
            let before = src[..at].chars().next_back();
            let after = src[at + word.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    let any = |words: &[&str]| words.iter().any(|w| uses(w));
    let kind = match (go, ours) {
        (Outcome::Error(_), Outcome::Text(_)) => "Go fails, we print",
        (Outcome::Text(_), Outcome::Error(_)) => "we fail, Go prints",
        _ => "texts differ",
    };
    let named = if src.contains("/*") && (src.contains("{{- /*") || src.contains("*/ -}}")) {
        "1 comment with trim markers"
    } else if any(&["rest", "initial", "mustRest", "mustInitial"]) {
        "2 rest/initial of an empty list"
    } else if any(&["set", "unset", "merge", "mergeOverwrite"]) && src.contains("$_ :=") {
        "5 set/unset/merge/mergeOverwrite change their argument"
    } else if src.contains("merge") && src.contains("nil") {
        "6 merge copies nil values"
    } else if any(&["html", "js", "urlquery"]) {
        "7 html/js/urlquery arguments"
    } else if uses("semver") {
        "8 semver values"
    } else if any(&["typeOf", "kindOf", "kindIs", "typeIs"]) || src.contains("%T") {
        "9 result types"
    } else if any(&["plural", "regexMatch", "deepCopy"]) {
        "10 argument checking"
    } else if uses("printf") {
        "3/4/11 printf verbs"
    } else if any(&["set", "unset", "merge", "mergeOverwrite"]) {
        "5 set/unset/merge/mergeOverwrite change their argument"
    } else {
        "other"
    };
    format!("{named} ({kind})")
}

fn landscaper(src: &str, data: &Value) -> Outcome {
    let budget = Arc::new(Budget::default());
    let mut templates = GoTemplates::new(Arc::new(MemoryFiles::default()), &Descriptors::default(), budget);
    match templates.render(src, None, &to_go_json(data)) {
        Ok(text) => Outcome::Text(text),
        Err(err) => Outcome::Error(err),
    }
}

fn kots(src: &str) -> Outcome {
    let budget = Arc::new(Budget::default());
    let mut engine = Engine::new(statics::functions(&statics::Statics::default()), &budget);
    match engine.render_text(&src.replace("{{", "repl{{"), &budget) {
        Ok(text) => Outcome::Text(text),
        Err(err) => Outcome::Error(err),
    }
}

fn go_outcome(value: &Value) -> Outcome {
    match value.get("err").and_then(Value::as_str) {
        Some(err) => Outcome::Error(err.to_string()),
        None => Outcome::Text(value.get("out").and_then(Value::as_str).unwrap_or_default().to_string()),
    }
}

/// One difference found, for the report.
struct Example {
    id: String,
    path: &'static str,
    src: String,
    go: Outcome,
    ours: Outcome,
}

fn main() {
    let Ok(path) = std::env::var("GO_TEMPLATE_DIFF") else {
        println!(
            "go_template_diff: skipped: no Go results given (scripts/go-template-diff runs this test with real Go)"
        );
        return;
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("go_template_diff: cannot read {path}: {err}");
            std::process::exit(2);
        }
    };
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/templates.md")).unwrap_or_default();
    let mut undocumented_rules = Vec::new();
    for rule in RULES {
        if !docs.contains(rule.doc) {
            undocumented_rules.push(rule.name);
        }
    }
    let (mut cases, mut runs, mut same) = (0usize, 0usize, 0usize);
    let mut documented: BTreeMap<&str, Vec<Example>> = BTreeMap::new();
    let mut causes: BTreeMap<String, Vec<Example>> = BTreeMap::new();
    let mut by_source: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(result) = serde_json::from_str::<Value>(line) else {
            eprintln!("go_template_diff: not a result line: {line}");
            std::process::exit(2);
        };
        cases += 1;
        let id = result.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        let src = result.get("src").and_then(Value::as_str).unwrap_or_default().to_string();
        let data = result.get("data").cloned().unwrap_or(Value::Null);
        let source = id.split('/').next().unwrap_or_default().to_string();
        for path in ["landscaper", "kots"] {
            runs += 1;
            let go = go_outcome(result.get(path).unwrap_or(&Value::Null));
            let ours = if path == "landscaper" { landscaper(&src, &data) } else { kots(&src) };
            let entry = by_source.entry(source.clone()).or_default();
            entry.0 += 1;
            let agree = match (&go, &ours) {
                (Outcome::Error(_), Outcome::Error(_)) => true,
                (go, ours) => go == ours,
            };
            if agree {
                same += 1;
                continue;
            }
            let example = Example { id: id.clone(), path, src: src.clone(), go, ours };
            if let Some(rule) = RULES.iter().find(|r| (r.applies)(&src, &example.go, &example.ours)) {
                documented.entry(rule.name).or_default().push(example);
                continue;
            }
            entry.1 += 1;
            causes.entry(cause(&src, &example.go, &example.ours)).or_default().push(example);
        }
    }
    let different: usize = causes.values().map(Vec::len).sum();
    let allowed: usize = documented.values().map(Vec::len).sum();
    println!("go_template_diff: {cases} templates, {runs} runs (Landscaper and KOTS paths)");
    println!("  same as Go: {same}; documented differences: {allowed}; undocumented differences: {different}");
    for (source, (n, bad)) in &by_source {
        println!("  {source}: {n} runs, {bad} undocumented differences");
    }
    for (rule, examples) in &documented {
        println!("  documented: {rule}: {}", examples.len());
    }
    let show = std::env::var("GO_TEMPLATE_DIFF_EXAMPLES").ok().and_then(|n| n.parse().ok()).unwrap_or(3usize);
    for (cause, examples) in &causes {
        println!("\nundocumented: {cause}: {}", examples.len());
        for example in examples.iter().take(show) {
            println!("  {} ({}): {:?}", example.id, example.path, example.src);
            println!("    Go:   {:?}", example.go);
            println!("    ours: {:?}", example.ours);
        }
    }
    for rule in &undocumented_rules {
        println!("rule {rule:?} is not in docs/templates.md's differences");
    }
    if different > 0 || !undocumented_rules.is_empty() {
        std::process::exit(1);
    }
}
