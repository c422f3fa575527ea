//! `doc::locate` against every YAML file in the fixtures and examples: every field of every
//! document must be found, on a line that names its key. This is the error path's position
//! finder, so it is checked on real package text rather than on hand-made snippets only.

use render_blueprint::doc::{locate, read_yaml_documents, FieldPath, Value};
use std::path::{Path, PathBuf};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        // Not through symlinks: fixtures hold symlink loops on purpose.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Every field below `value`, with the key that names it (None for list entries).
fn fields(value: &Value, at: FieldPath, key: Option<&str>, out: &mut Vec<(FieldPath, Option<String>)>) {
    out.push((at.clone(), key.map(str::to_string)));
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| fields(v, at.clone().key(k), Some(k), out)),
        Value::Array(list) => list.iter().enumerate().for_each(|(i, v)| fields(v, at.clone().index(i), None, out)),
        _ => {}
    }
}

#[test]
fn every_field_of_every_fixture_is_found_on_a_line_naming_it() {
    // Fixtures nest up to the reader's 256 levels; a debug build's recursive YAML reader needs
    // more than a test thread's 2 MiB of stack for them.
    let thread = std::thread::Builder::new().stack_size(64 << 20).spawn(check_every_field);
    let joined = thread.unwrap_or_else(|err| panic!("cannot start the check thread: {err}")).join();
    if let Err(panic) = joined {
        std::panic::resume_unwind(panic);
    }
}

fn check_every_field() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    yaml_files(&root.join("tests/fixtures"), &mut files);
    yaml_files(&root.join("examples"), &mut files);
    let mut checked = 0;
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        // Broken YAML, anchors (a value written once, found through its alias) and merge keys are
        // outside this check.
        let Ok(documents) = read_yaml_documents(&text) else { continue };
        if text.contains('&') || text.contains("<<:") {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (index, document) in documents.iter().enumerate() {
            let mut all = Vec::new();
            fields(document, FieldPath::root(), None, &mut all);
            for (path, key) in all {
                let at = locate(&text, index, &path);
                let Some(at) = at else { panic!("{}: document {index}: {path} not found", file.display()) };
                let line = lines.get(at.line as usize - 1).copied().unwrap_or_default();
                // A key holding quotes, backslashes or control characters is written escaped, so
                // its text is not on the line as it reads.
                let plain_key = |k: &String| !k.contains(['"', '\\', '\'']) && !k.chars().any(char::is_control);
                if let Some(key) = key.filter(|k| plain_key(k) && !k.is_empty()) {
                    // The key's line, or the value's when it starts on the key's line; a key
                    // written across lines is rare enough to ignore.
                    let column = line.char_indices().nth(at.column as usize - 1).map_or(line.len(), |(i, _)| i);
                    let (before, after) = line.split_at(column);
                    let at_key = after.trim_start_matches(['"', '\'']).starts_with(&key);
                    // A tag (`!e!text`) may stand between the key and its value.
                    let before = before.trim_end();
                    let before = match before.rsplit_once(' ') {
                        Some((head, tag)) if tag.starts_with('!') => head,
                        _ => before,
                    };
                    let at_value =
                        before.trim_end().trim_end_matches(':').trim_end_matches(['"', '\'']).ends_with(&key);
                    assert!(
                        at_key || at_value,
                        "{}: document {index}: {path} located at {}:{} on {line:?}",
                        file.display(),
                        at.line,
                        at.column
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "only {checked} fields checked");
}
