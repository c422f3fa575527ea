//! The differential test of Go templates against real Go and Sprig (issue 35). Go's side comes
//! from `tests/gotemplate/runner.go` (built and run by `scripts/go-template-diff`), which writes
//! each case with what Go made of it on both paths: Landscaper's (`{{ }}`, data, missingkey=zero)
//! and KOTS's (`repl{{ }}`, no data). This runs the same cases through our two paths (the
//! Landscaper path twice: its data read from YAML and from JSON, the two envelopes of a
//! ResourceList, both compared with Go's one answer) and reports
//! every difference: the documented ones (docs/templates.md) by rule, not counted, the others by
//! cause; any of those fails.
//!
//! Without `GO_TEMPLATE_DIFF` (the runner's output) it says so and passes: `cargo test` alone has
//! no Go to compare with.

use render_blueprint::doc::{read_yaml_documents, to_yaml, Strict, Value};
use render_blueprint::imports::files::BlueprintFs;
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
    Rule { name: "field of nil", doc: "A field of a missing or null value", applies: field_of_nil },
    Rule { name: "camelcase", doc: "`camelcase` keeps a capital letter that follows", applies: camelcase },
    Rule { name: "complex constants", doc: "Complex constants", applies: complex_constants },
    Rule { name: "method calls on nil", doc: "A field given arguments", applies: method_calls },
    Rule { name: "refused functions", doc: "functions that need a cluster", applies: refused },
    Rule { name: "base64 error text", doc: "`b64dec` of text that is not base64", applies: base64_error },
    Rule { name: "error messages", doc: "Go parse and execution messages are the crate's", applies: both_fail },
];

/// Both fail: the messages are the crate's, not Go's, and are not compared.
fn both_fail(_: &str, go: &Outcome, ours: &Outcome) -> bool {
    error(go).is_some() && error(ours).is_some()
}

fn text(outcome: &Outcome) -> Option<&str> {
    match outcome {
        Outcome::Text(text) => Some(text),
        Outcome::Error(_) => None,
    }
}

fn error(outcome: &Outcome) -> Option<&str> {
    match outcome {
        Outcome::Error(text) => Some(text),
        Outcome::Text(_) => None,
    }
}

/// Go stops at a field of nil (`nil pointer evaluating interface {}.b`); we print `<no value>`.
fn field_of_nil(_: &str, go: &Outcome, ours: &Outcome) -> bool {
    error(go).is_some_and(|e| e.contains("nil pointer evaluating")) && text(ours).is_some()
}

/// Landscaper links xstrings 1.4, whose `ToCamelCase` keeps a capital after a lower-case letter;
/// Sprig 3.2.3's own module (the test's Go) has xstrings 1.3.3, which lowercases it.
fn camelcase(src: &str, go: &Outcome, ours: &Outcome) -> bool {
    let (Some(go), Some(ours)) = (text(go), text(ours)) else { return false };
    src.contains("camelcase") && go != ours && go.to_lowercase() == ours.to_lowercase()
}

/// Go's complex constants (`1i`) are not read.
fn complex_constants(src: &str, _: &Outcome, ours: &Outcome) -> bool {
    error(ours).is_some_and(|e| e.contains("\"i\"") || e.ends_with(": i"))
        && src.char_indices().any(|(i, c)| c == 'i' && i > 0 && src.as_bytes()[i - 1].is_ascii_digit())
}

/// `.Method arg` on a missing value: Go gives `<no value>`, the crate refuses arguments to a
/// field.
fn method_calls(_: &str, go: &Outcome, ours: &Outcome) -> bool {
    text(go).is_some() && error(ours).is_some_and(|e| e.contains("can't give argument to non-function"))
}

/// Functions we refuse (randomness, the clock, the network, a cluster; derivePassword).
fn refused(_: &str, _: &Outcome, ours: &Outcome) -> bool {
    error(ours).is_some_and(|e| e.contains("is not available"))
}

/// Go's base64 error names the first bad byte; ours the position the decoder stopped at.
fn base64_error(src: &str, go: &Outcome, ours: &Outcome) -> bool {
    src.contains("b64dec")
        && text(go).is_some_and(|t| t.to_lowercase().contains("illegal base64 data"))
        && text(ours).is_some_and(|t| t.to_lowercase().contains("illegal base64 data"))
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
    match templates.render(src, &BlueprintFs::package(""), None, &to_go_json(data)) {
        Ok(text) => Outcome::Text(text),
        Err(err) => Outcome::Error(err.into()),
    }
}

fn kots(src: &str) -> Outcome {
    let budget = Arc::new(Budget::default());
    let mut engine = Engine::new(statics::functions(&statics::Statics::default()));
    match engine.render_text(&src.replace("{{", "repl{{"), &budget) {
        Ok(text) => Outcome::Text(text),
        Err(err) => Outcome::Error(err),
    }
}

/// A case's data as KRM mode reads it from a ResourceList in each envelope: written as YAML and
/// read by the YAML reader, and written as JSON and read by the JSON reader. Both must give
/// Go's answer (issue 49: JSON's floats once reached templates as serde_json's private map).
fn envelopes(data: &Value) -> (Value, Value) {
    let yaml = read_yaml_documents(&to_yaml(data)).ok().and_then(|mut docs| docs.pop()).unwrap_or(Value::Null);
    let json = serde_json::to_string(data).ok().and_then(|text| serde_json::from_str::<Strict>(&text).ok());
    (yaml, json.map_or(Value::Null, |strict| strict.0))
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
    // The differences table of docs/templates.md holds one row per rule, and nothing else.
    let table: Vec<&str> = docs
        .split("### Differences from Landscaper")
        .nth(1)
        .and_then(|rest| rest.split("Outside what Go defines").next())
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| difference |"))
        .collect();
    let mut undocumented_rules = Vec::new();
    for rule in RULES {
        if !table.iter().any(|row| row.contains(rule.doc)) {
            undocumented_rules.push(rule.name);
        }
    }
    let unknown_rows: Vec<&&str> =
        table.iter().filter(|row| !RULES.iter().any(|rule| row.contains(rule.doc))).collect();
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
        let (yaml_data, json_data) = envelopes(&data);
        let source = id.split('/').next().unwrap_or_default().to_string();
        for path in ["landscaper", "landscaper (JSON)", "kots"] {
            runs += 1;
            let go = go_outcome(result.get(path.split(' ').next().unwrap_or(path)).unwrap_or(&Value::Null));
            let ours = match path {
                "landscaper" => landscaper(&src, &yaml_data),
                "landscaper (JSON)" => landscaper(&src, &json_data),
                _ => kots(&src),
            };
            let entry = by_source.entry(source.clone()).or_default();
            entry.0 += 1;
            if matches!((&go, &ours), (Outcome::Text(a), Outcome::Text(b)) if a == b) {
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
    println!("go_template_diff: {cases} templates, {runs} runs (Landscaper from YAML and JSON, and KOTS)");
    println!("  same text as Go: {same}; documented differences: {allowed}; undocumented differences: {different}");
    for (source, (n, bad)) in &by_source {
        println!("  {source}: {n} runs, {bad} undocumented differences");
    }
    for (rule, examples) in &documented {
        println!("  documented: {rule}: {}", examples.len());
    }
    let show = std::env::var("GO_TEMPLATE_DIFF_EXAMPLES").ok().and_then(|n| n.parse().ok()).unwrap_or(3usize);
    // GO_TEMPLATE_DIFF_RULE=NAME also shows a documented rule's examples.
    let rule = std::env::var("GO_TEMPLATE_DIFF_RULE").unwrap_or_default();
    for example in documented.get(rule.as_str()).into_iter().flatten().take(show) {
        println!("  documented {rule}: {} ({}): {:?}", example.id, example.path, example.src);
        println!("    Go:   {:?}", example.go);
        println!("    ours: {:?}", example.ours);
    }
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
    for row in &unknown_rows {
        println!("docs/templates.md's differences name one the test does not allow: {row}");
    }
    if different > 0 || !undocumented_rules.is_empty() || !unknown_rows.is_empty() {
        std::process::exit(1);
    }
}
