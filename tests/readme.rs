//! README.md and docs/ are checked against the code they document.
//!
//! - Regions between `<!-- BEGIN GENERATED: <name> -->` and `<!-- END GENERATED: <name> -->` are
//!   made here: `config-reference` in docs/configuration.md from the JSON Schema of
//!   `RenderBlueprint` (one table per object definition: field, type, description, default),
//!   `thirty-seconds-input` and `thirty-seconds-output` in README.md from `examples/thirty-seconds`
//!   and what the binary prints for it. A stale region fails; `BLESS=1 cargo test --test readme`
//!   rewrites them (review the diff), as `BLESS=1 cargo test --test golden` does for fixtures.
//! - `--help` prints the README's `<!--mdtogo:Short-->`, `<!--mdtogo:Long-->` and
//!   `<!--mdtogo:Examples-->` regions verbatim (src/help.rs cuts them out of the compiled-in README).
//! - Every relative link in README.md and docs/*.md leads to a file or directory of the
//!   repository, and a `#anchor` into a Markdown file to one of its headings.
//! - The documentation speaks for itself: it cites no document outside the repository.

use assert_cmd::Command;
use render_blueprint::help::region;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("render-blueprint").unwrap_or_else(|err| panic!("binary not built: {err}"));
    cmd.env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING");
    cmd
}

// ---------------------------------------------------------------------------------------------
// The configuration reference, from the schema.

/// `[Name](#name)`: a link to the table of a definition (GitHub's heading anchor).
fn link(name: &str) -> String {
    format!("[{name}](#{})", name.to_lowercase())
}

fn definition_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// `` `A` or `B` `` for an enum.
fn enumeration(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| format!("`{}`", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// A property's type as a reader wants it: `string`, `list of Execution`, `object`, `any`; `null` in a
/// union only says the field may be left out, so it is not shown.
fn type_text(property: &Value, defs: &serde_json::Map<String, Value>) -> String {
    if property == &Value::Bool(true) {
        return "any".into();
    }
    if let Some(reference) = property.get("$ref").and_then(Value::as_str) {
        let name = definition_name(reference);
        return match defs.get(name).and_then(|d| d.get("enum")).and_then(Value::as_array) {
            Some(values) => enumeration(values),
            None => link(name),
        };
    }
    if let Some(options) = property.get("anyOf").and_then(Value::as_array) {
        let shown: Vec<String> = options
            .iter()
            .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
            .map(|o| type_text(o, defs))
            .collect();
        return shown.join(" or ");
    }
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return enumeration(values);
    }
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => vec![],
    };
    match types.as_slice() {
        [] => "any".into(),
        ["array"] => match property.get("items").map(|i| type_text(i, defs)) {
            Some(item) if item != "any" => format!("list of {item}"),
            _ => "list".into(),
        },
        [one] => one.to_string(),
        several => several.join(" or "),
    }
}

/// A table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// Whether a default says nothing beyond "empty" (`{}`, `[]`, and objects made only of those).
fn is_empty_default(value: &Value) -> bool {
    match value {
        Value::Array(list) => list.is_empty(),
        Value::Object(map) => map.values().all(|v| v.is_null() || is_empty_default(v)),
        _ => false,
    }
}

fn default_text(property: &Value) -> String {
    match property.get("default") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) if text.is_empty() => String::new(),
        Some(value) if value.is_object() && is_empty_default(value) => "`{}`".into(),
        Some(value) => format!("`{value}`"),
    }
}

/// The definitions that refer to `name`, as "`field`, `other` of [Owner](#owner)".
fn used_by(name: &str, tables: &[(&str, &Value)]) -> Vec<String> {
    let target = format!("#/$defs/{name}");
    let refers = |schema: &Value| -> bool {
        let mut stack = vec![schema];
        while let Some(s) = stack.pop() {
            if s.get("$ref").and_then(Value::as_str) == Some(target.as_str()) {
                return true;
            }
            stack.extend(s.get("items"));
            stack.extend(s.get("anyOf").and_then(Value::as_array).into_iter().flatten());
        }
        false
    };
    let mut found = Vec::new();
    for (owner, def) in tables {
        let fields: Vec<String> = def
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, property)| refers(property))
            .map(|(field, _)| format!("`{field}`"))
            .collect();
        if !fields.is_empty() {
            found.push(format!("{} of {}", fields.join(", "), link(owner)));
        }
    }
    found
}

/// One table per object definition, the root (`RenderBlueprint`) first, then the definitions in
/// the schema's order; enums are written where they are used.
fn config_reference(schema: &Value) -> String {
    let empty = serde_json::Map::new();
    let defs = schema.get("$defs").and_then(Value::as_object).unwrap_or(&empty);
    let title = schema.get("title").and_then(Value::as_str).unwrap_or("RenderBlueprint");
    let mut tables: Vec<(&str, &Value)> = vec![(title, schema)];
    tables
        .extend(defs.iter().filter(|(_, def)| def.get("properties").is_some()).map(|(name, def)| (name.as_str(), def)));
    let mut out = String::from(
        "<!-- Made by tests/readme.rs from `render-blueprint schema`; `BLESS=1 cargo test --test readme` \
         rewrites it. -->\n",
    );
    for (name, def) in &tables {
        out.push_str(&format!("\n### {name}\n\n"));
        if let Some(description) = def.get("description").and_then(Value::as_str) {
            out.push_str(&format!("{}\n\n", cell(description)));
        }
        let users = used_by(name, &tables);
        if !users.is_empty() {
            out.push_str(&format!("Used as {}.", users.join(", ")));
            if def.get("additionalProperties") == Some(&Value::Bool(true)) {
                out.push_str(" Other fields are accepted.");
            }
            out.push_str("\n\n");
        }
        let required: Vec<&str> =
            def.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        out.push_str("| field | type | description | default |\n|---|---|---|---|\n");
        for (field, property) in def.get("properties").and_then(Value::as_object).into_iter().flatten() {
            let description = property.get("description").and_then(Value::as_str).unwrap_or_default();
            let default =
                if required.contains(&field.as_str()) { "required".to_string() } else { default_text(property) };
            out.push_str(&format!(
                "| `{field}` | {} | {} | {default} |\n",
                cell(&type_text(property, defs)),
                cell(description)
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Generated regions.

fn markers(name: &str) -> (String, String) {
    (format!("<!-- BEGIN GENERATED: {name} -->\n"), format!("<!-- END GENERATED: {name} -->"))
}

/// The byte range of a generated region's content (after the BEGIN line, up to the END marker).
fn region_range(readme: &str, name: &str) -> Option<(usize, usize)> {
    let (begin, end) = markers(name);
    let start = readme.find(&begin)? + begin.len();
    let stop = start + readme[start..].find(&end)?;
    Some((start, stop))
}

fn fenced(language: &str, text: &str) -> String {
    format!("```{language}\n{}\n```\n", text.trim_end_matches('\n'))
}

/// The generated regions: the file each lives in (relative to the repository), its name, its text.
fn generated_regions() -> Vec<(&'static str, &'static str, String)> {
    let schema = render_blueprint::config::json_schema();
    let example = root().join("examples/thirty-seconds");
    let input = read(&example.join("input.yaml"));
    let output = bin().current_dir(&example).write_stdin(input.clone()).output().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    vec![
        ("docs/configuration.md", "config-reference", config_reference(&schema)),
        ("README.md", "thirty-seconds-input", fenced("yaml", &input)),
        ("README.md", "thirty-seconds-output", fenced("yaml", &String::from_utf8_lossy(&output.stdout))),
    ]
}

#[test]
fn generated_regions_are_current() {
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let regions = generated_regions();
    let mut files: Vec<&str> = regions.iter().map(|(file, _, _)| *file).collect();
    files.dedup();
    for file in files {
        let path = root().join(file);
        let mut document = read(&path);
        for (_, name, text) in regions.iter().filter(|(f, _, _)| *f == file) {
            let Some((start, stop)) = region_range(&document, name) else {
                let (begin, end) = markers(name);
                panic!("{file} has no region {begin:?} … {end:?}");
            };
            if document[start..stop] != *text {
                if bless {
                    document.replace_range(start..stop, text);
                } else {
                    stale.push(format!("--- {name}: {file} has\n{}\n--- expected\n{text}", &document[start..stop]));
                }
            }
        }
        if bless {
            std::fs::write(&path, &document).unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "generated regions are stale; run `BLESS=1 cargo test --test readme` and review the diff\n{}",
        stale.join("\n")
    );
}

#[test]
fn reference_documents_every_field() {
    let schema = render_blueprint::config::json_schema();
    let reference = config_reference(&schema);
    for field in ["valuesFrom", "substituteFrom", "pathPrefix", "implementationConstraints", "allowNameChange"] {
        assert!(reference.contains(&format!("| `{field}` |")), "{field} missing:\n{reference}");
    }
    // Every field has a description: the reference is only as good as the doc comments.
    let mut undocumented = Vec::new();
    let definitions = schema.get("$defs").and_then(Value::as_object).into_iter().flatten();
    for (name, def) in std::iter::once((&"RenderBlueprint".to_string(), &schema)).chain(definitions) {
        for (field, property) in def.get("properties").and_then(Value::as_object).into_iter().flatten() {
            if property.get("description").and_then(Value::as_str).is_none_or(str::is_empty) {
                undocumented.push(format!("{name}.{field}"));
            }
        }
    }
    assert!(undocumented.is_empty(), "fields without a description (add a doc comment): {undocumented:?}");
}

// ---------------------------------------------------------------------------------------------
// --help is the README's text.

fn help(flag: &str) -> String {
    // Wide enough that clap does not wrap; README keeps these regions within 100 columns.
    let output = bin().arg(flag).env("COLUMNS", "100").output().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn help_prints_the_readme_short_long_and_examples() {
    let readme = read(&root().join("README.md"));
    let short = region(&readme, "Short").unwrap_or_else(|| panic!("README.md has no Short region"));
    let long = region(&readme, "Long").unwrap_or_else(|| panic!("README.md has no Long region"));
    let examples = region(&readme, "Examples").unwrap_or_else(|| panic!("README.md has no Examples region"));
    let long_help = help("--help");
    for (name, text) in [("Short", &short), ("Long", &long), ("Examples", &examples)] {
        assert!(
            long_help.contains(text.as_str()),
            "--help lacks the README's {name} text:\n{text}\n--- help\n{long_help}"
        );
    }
    let short_help = help("-h");
    assert!(short_help.contains(short.as_str()), "-h lacks the Short text:\n{short_help}");
    assert!(!short_help.contains(long.as_str()), "-h should be the short help:\n{short_help}");
}

#[test]
fn help_regions_read_as_plain_text() {
    let readme = read(&root().join("README.md"));
    for name in ["Short", "Long", "Examples"] {
        let text = region(&readme, name).unwrap_or_default();
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{name}: line over 100 columns: {line}");
            assert!(!line.trim_start().starts_with('|'), "{name}: tables do not read in a terminal: {line}");
            assert!(
                !line.contains("](") && !line.contains("```"),
                "{name}: links and fences do not read in a terminal: {line}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Links and citations.

/// README.md and every Markdown file under docs/, relative to the repository.
fn documentation() -> Vec<String> {
    let mut files = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap_or_else(|err| panic!("cannot list docs/: {err}"))
        .filter_map(|entry| entry.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The lines of a Markdown text outside fenced code blocks, with inline code spans removed.
fn prose_lines(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push(without_code_spans(line));
        }
    }
    lines
}

/// A line without its code spans: a run of backticks opens one, the next run of the same length
/// closes it.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..open]);
        let ticks = rest[open..].chars().take_while(|c| *c == '`').count();
        let after = &rest[open + ticks..];
        let fence = "`".repeat(ticks);
        match after.find(&fence) {
            Some(close) => rest = &after[close + ticks..],
            None => return out + &rest[open..],
        }
    }
    out + rest
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; a repeated
/// heading gets `-1`, `-2`….
fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if fenced || hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().replace('`', "");
        let slug: String = text
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let repeats = seen.entry(slug.clone()).or_insert(0);
        found.push(if *repeats == 0 { slug } else { format!("{slug}-{repeats}") });
        *repeats += 1;
    }
    found
}

/// Every `](target)` of the prose: the target as written.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(markdown) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn relative_links_lead_to_files_and_headings() {
    let repository = root().canonicalize().unwrap_or_else(|err| panic!("{err}"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documentation() {
        let text = read(&root().join(&file));
        let directory = root().join(&file).parent().map(Path::to_path_buf).unwrap_or_else(root);
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() { root().join(&file) } else { directory.join(path) };
            let Ok(real) = linked.canonicalize() else {
                broken.push(format!("{file}: {target}: no such file"));
                continue;
            };
            if !real.starts_with(&repository) {
                broken.push(format!("{file}: {target}: outside the repository"));
                continue;
            }
            if let (Some(anchor), true) = (anchor, real.extension().is_some_and(|e| e == "md")) {
                if !anchors(&read(&real)).iter().any(|a| a == anchor) {
                    broken.push(format!("{file}: {target}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found: is the link finder broken?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_github() {
    let markdown = "# A `b` c\n## What `render` reads and prints\n```\n# not a heading\n```\n## `kots.io/when`\n## A b c\n## Step 1\n## A b c\n";
    assert_eq!(
        anchors(markdown),
        ["a-b-c", "what-render-reads-and-prints", "kotsiowhen", "a-b-c-1", "step-1", "a-b-c-2"]
    );
    assert_eq!(link_targets("[a](x.md#y) `[b](no)` [c](#z)"), ["x.md#y", "#z"]);
}

#[test]
fn documentation_cites_nothing_outside_the_repository() {
    // The product was specified in documents users do not have; the docs state the rules instead.
    let forbidden = ["SPEC", "CONTAINERS.md", "seed 0", "seeds 0", "Seed 0", "steering folder"];
    let schema = serde_json::to_string(&render_blueprint::config::json_schema()).unwrap_or_default();
    let mut texts: Vec<(String, String)> =
        documentation().into_iter().map(|file| (read(&root().join(&file)), file)).collect();
    texts.push((schema, "the JSON Schema".into()));
    texts.push((help("--help"), "--help".into()));
    let mut found = Vec::new();
    for (text, place) in &texts {
        for word in forbidden {
            if text.contains(word) {
                found.push(format!("{place} mentions {word:?}"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
