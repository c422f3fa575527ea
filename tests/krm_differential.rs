//! Differential test of KRM mode through the binary: random ResourceLists (the generator of
//! `src/krm/differential/generate.rs`, whose library test compares the fast and the full reading
//! item by item) are run through `render-blueprint` and
//! - an input the full reader refuses exits 2, with the error the library gives;
//! - the items on stdout are the library's passthrough, byte for byte (so what the library test
//!   proves of those bytes holds for the binary, steps included), and read by the full reader
//!   they are the input's items;
//! - run again on its own output, the binary writes the same bytes.
//!
//! `DIFF_ROUNDS` (default 30) and `DIFF_SEED` (default 1) run a longer hunt.

#[path = "../src/krm/differential/generate.rs"]
mod generate;

use generate::{fixture_texts, resource_list, stream_documents, Rng};
use render_blueprint::doc::{read_yaml_documents, read_yaml_documents_as, Strict, Value};
use render_blueprint::krm::ResourceList;
use std::io::Write;
use std::process::{Command, Stdio};

/// Items of the fixtures at column 0 (configuration kinds left out: steps act on them).
fn pool() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut items = std::collections::BTreeSet::new();
    let config = |text: &str| {
        ["windsorcli.dev", "fn.blueprint.dev", "landscaper.gardener.cloud", "RenderBlueprint"]
            .iter()
            .any(|g| text.contains(g))
    };
    for (_, text) in fixture_texts(&root) {
        match ResourceList::parse(text.as_bytes()) {
            Ok(list) => {
                for item in list.items.into_iter().take(64) {
                    let text = match item.unchanged_source() {
                        Some((raw, indent)) => moved_left(raw, indent),
                        None => render_blueprint::doc::to_yaml(&item.into_value()),
                    };
                    if !config(&text) {
                        items.insert(text);
                    }
                }
            }
            Err(_) => {
                for document in stream_documents(&text) {
                    let read = read_yaml_documents(&document);
                    if !config(&document) && read.is_ok_and(|d| d.len() == 1 && d[0].is_object()) {
                        items.insert(document);
                    }
                }
            }
        }
    }
    items.into_iter().filter(|t| t.len() <= 16 << 10 && t.ends_with('\n')).collect()
}

fn moved_left(text: &str, indent: usize) -> String {
    let mut out: Vec<&str> = Vec::new();
    for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
        let spaces = if i == 0 { 0 } else { line.len() - line.trim_start_matches(' ').len() };
        out.push(&line[spaces.min(indent)..]);
    }
    out.join("\n") + "\n"
}

struct Run {
    stdout: String,
    stderr: String,
    code: i32,
}

fn run(stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_render-blueprint"))
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING")
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_ROOT")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start the binary: {err}"));
    if let Some(mut pipe) = child.stdin.take() {
        let _ = pipe.write_all(stdin.as_bytes());
    }
    let output = child.wait_with_output().unwrap_or_else(|err| panic!("{err}"));
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().unwrap_or(-1),
    }
}

/// The output without the results the steps reported.
fn items_part(stdout: &str) -> &str {
    stdout.find("\nresults:\n").map_or(stdout, |at| &stdout[..at + 1])
}

/// The items of a ResourceList as the full reader reads them (`None`: it refuses the text).
fn full_items(text: &str) -> Option<Vec<Value>> {
    let documents: Vec<Strict> = read_yaml_documents_as(text).ok()?;
    let mut lists = documents.into_iter().map(|d| d.0).filter(|d| !d.is_null());
    let list = lists.next()?;
    if lists.next().is_some() {
        return None;
    }
    Some(list.get("items").and_then(Value::as_array).cloned().unwrap_or_default())
}

/// The elements of the output's `items` (each `- ` at column 0 and its lines).
fn elements(stdout: &str) -> Vec<&str> {
    let items = items_part(stdout);
    let Some(start) = items.find("\nitems:\n").map(|at| at + "\nitems:\n".len()) else { return Vec::new() };
    let mut starts: Vec<usize> = items[start..]
        .match_indices('\n')
        .map(|(at, _)| start + at + 1)
        .filter(|&at| items[at..].starts_with("- ") || items[at..].starts_with("-\n"))
        .collect();
    starts.insert(0, start);
    starts.dedup();
    starts.iter().enumerate().map(|(i, &at)| &items[at..starts.get(i + 1).copied().unwrap_or(items.len())]).collect()
}

/// The functionConfig of the input, for the second run (the output never holds it).
fn with_config(stdout: &str, config: Option<&Value>) -> String {
    let mut text = items_part(stdout).to_string();
    if let Some(config) = config {
        text.push_str("functionConfig:\n");
        for line in render_blueprint::doc::to_yaml(config).lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    text
}

fn check(text: &str) -> Result<(), String> {
    let library = ResourceList::parse(text.as_bytes());
    let first = run(text);
    let list = match library {
        Err(err) => {
            if first.code != 2 || first.stderr.trim_end() != format!("error: {err}") {
                return Err(format!("library: {err}; binary exit {}: {}", first.code, first.stderr));
            }
            return Ok(());
        }
        Ok(list) => list,
    };
    if first.code == 2 {
        return Err(format!("the library reads it, the binary refuses it: {}", first.stderr));
    }
    let mut expected = Vec::new();
    list.write_to(&mut expected, list.items.clone(), Vec::new()).map_err(|err| err.to_string())?;
    let expected = String::from_utf8_lossy(&expected).into_owned();
    // Items no step changed (same values as read) are the library's passthrough, byte for byte.
    let reference = full_items(text).ok_or("the full reader refuses what the library read")?;
    let written = full_items(&first.stdout).ok_or_else(|| format!("stdout does not read:\n{}", first.stdout))?;
    let (ours, theirs) = (elements(&expected), elements(&first.stdout));
    if written.len() < reference.len() || ours.len() != reference.len() || theirs.len() != written.len() {
        return Err(format!("{} items read, {} written:\n{}", reference.len(), written.len(), first.stdout));
    }
    for (i, read) in reference.iter().enumerate() {
        if &written[i] == read && theirs[i] != ours[i] {
            if let Ok(dir) = std::env::var("DIFF_SAVE") {
                let case = std::path::Path::new(&dir).join(format!("binary-{}", text.len()));
                let _ = std::fs::create_dir_all(&case);
                let _ = std::fs::write(case.join("input.yaml"), text);
                let _ = std::fs::write(case.join("actual.yaml"), &first.stdout);
                let _ = std::fs::write(case.join("expected.yaml"), &expected);
            }
            return Err(format!("unchanged item {i} written otherwise:\n{}--- library:\n{}", theirs[i], ours[i]));
        }
    }
    let second = run(&with_config(&first.stdout, list.function_config.as_ref()));
    if items_part(&second.stdout) != items_part(&first.stdout) {
        return Err(format!("not idempotent:\n{}\n--- second run:\n{}", first.stdout, second.stdout));
    }
    Ok(())
}

#[test]
fn the_binary_passes_random_lists_through() {
    // Fixture items nest 250 deep, more than a test thread's stack holds unoptimized.
    let run = std::thread::Builder::new().stack_size(256 << 20).spawn(rounds);
    if let Ok(Err(panic)) = run.map(|run| run.join()) {
        std::panic::resume_unwind(panic);
    }
}

fn rounds() {
    let env = |key: &str, default: u64| std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let (rounds, first) = (env("DIFF_ROUNDS", 30), env("DIFF_SEED", 1));
    let pool = pool();
    let mut failures = Vec::new();
    for seed in first..first + rounds {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x1234_5678);
        rng.next();
        let big = seed % 97 == 96;
        let (text, _) = resource_list(&mut rng, &pool, big);
        if let Err(why) = check(&text) {
            failures.push(format!("seed {seed}: {why}\n--- input:\n{text}"));
            if failures.len() >= 3 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
