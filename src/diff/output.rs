//! The report on stdout: as dyff's human text (`-o text`), one line per resource (`-o brief`),
//! GitHub workflow annotations (`-o github`) or JSON (`-o json`). Secret values are redacted
//! here unless the user asked for them.

use super::{Change, Changed, Id, Report, Whole};
use crate::doc::{to_yaml, Value};
use crate::krm::REDACTED;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The report as text, as dyff lays it out, ending with the notes ([`notes`]); `no differences
/// between A and B` when there are none. Every value, key and name in it comes from the input,
/// so its control characters are made visible ([`crate::diag::escape_controls`]): a carriage
/// return or an ANSI escape would otherwise make a changed value look unchanged or hide a line
/// of the report.
pub fn text(report: &Report, show_secrets: bool) -> String {
    let mut out = String::new();
    if report.is_empty() {
        let _ = writeln!(out, "no differences between {} and {}", report.sides[0], report.sides[1]);
    }
    out.push_str(&raw_text(report, show_secrets));
    for note in notes(report) {
        let _ = writeln!(out, "note: {note}");
    }
    crate::diag::escape_controls(&out).into_owned()
}

/// What the comparison left out, said with every format: local-config items, and kinds whose
/// renames were not looked for.
pub fn notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    let [a, b] = report.local_config_left_out;
    if a + b > 0 {
        let item = |n: usize| if n == 1 { "item" } else { "items" };
        notes.push(format!(
            "local-config items left out (config.kubernetes.io/local-config): {a} {} of {}, {b} {} of {}; \
             --keep-local-config compares them",
            item(a),
            report.sides[0],
            item(b),
            report.sides[1]
        ));
    }
    match report.filtered_out {
        0 => {}
        1 => notes.push("one resource that differs is left out by --include/--exclude".to_string()),
        n => notes.push(format!("{n} resources that differ are left out by --include/--exclude")),
    }
    for kind in &report.renames_not_detected {
        notes.push(format!(
            "renames of {kind} not looked for: more removed and added {kind} resources than rename detection \
             compares ({} pairs); they are shown removed and added whole",
            super::rename::MAX_PAIRS
        ));
    }
    notes
}

fn documents(values: &[&Whole], show_secrets: bool) -> String {
    values
        .iter()
        .map(|whole| {
            let value =
                if whole.id.is_secret() && !show_secrets { redacted(&whole.value) } else { whole.value.clone() };
            format!("---\n{}", to_yaml(&value))
        })
        .collect()
}

fn raw_text(report: &Report, show_secrets: bool) -> String {
    let mut out = String::new();
    for (sign, verb, documents_of) in [("-", "removed", &report.removed), ("+", "added", &report.added)] {
        let n = documents_of.len();
        if n == 0 {
            continue;
        }
        let what = if n == 1 { "one document".to_string() } else { format!("{n} documents") };
        let _ = writeln!(out, "(root level)\n{sign} {what} {verb}:");
        out.push_str(&indented(&documents(&documents_of.iter().collect::<Vec<_>>(), show_secrets), 2));
        out.push('\n');
    }
    for changed in &report.changed {
        out.push_str(&changed_text(changed, show_secrets, report.max_diff_lines));
    }
    out
}

/// One changed resource: a rename's header, then each change under its path.
fn changed_text(changed: &Changed, show_secrets: bool, max_lines: usize) -> String {
    let mut out = String::new();
    let id = &changed.id;
    if let Some((from, score)) = &changed.renamed_from {
        let _ = writeln!(out, "(root level)  ({})\n  ± renamed from {} ({score}% similar)\n", id.label(), from.label());
    }
    for (path, change) in &changed.changes {
        let shown_path = if path.is_empty() { "(root level)" } else { path.as_str() };
        let _ = writeln!(out, "{shown_path}  ({})", id.label());
        match shown_change(id, path, change, show_secrets) {
            Change::Value { old, new } => value_change(&mut out, &old, &new, max_lines),
            Change::Added(value) => entries_change(&mut out, "+", "added", &value),
            Change::Removed(value) => entries_change(&mut out, "-", "removed", &value),
            Change::Order { old, new } => {
                let _ = writeln!(out, "  ⇆ order changed\n    - {}\n    + {}", old.join(", "), new.join(", "));
            }
        }
        out.push('\n');
    }
    out
}

/// One line per added, removed and changed resource, and a last line counting them, as dyff's
/// brief report ends: `3 differences between A and B`.
pub fn brief(report: &Report) -> String {
    let mut out = String::new();
    for whole in &report.removed {
        let _ = writeln!(out, "- {}", whole.id.label());
    }
    for whole in &report.added {
        let _ = writeln!(out, "+ {}", whole.id.label());
    }
    for changed in &report.changed {
        let n = changed.changes.len();
        let changes = if n == 1 { "one change".to_string() } else { format!("{n} changes") };
        match &changed.renamed_from {
            Some((from, _)) => {
                let _ = writeln!(out, "± {} (renamed from {}; {changes})", changed.id.label(), from.label());
            }
            None => {
                let _ = writeln!(out, "± {} ({changes})", changed.id.label());
            }
        }
    }
    let n = report.removed.len() + report.added.len() + report.changed.len();
    let _ = match n {
        0 => writeln!(out, "no differences between {} and {}", report.sides[0], report.sides[1]),
        1 => writeln!(out, "one resource differs between {} and {}", report.sides[0], report.sides[1]),
        n => writeln!(out, "{n} resources differ between {} and {}", report.sides[0], report.sides[1]),
    };
    for note in notes(report) {
        let _ = writeln!(out, "note: {note}");
    }
    crate::diag::escape_controls(&out).into_owned()
}

/// GitHub Actions workflow commands, one `::notice` per added, removed or changed resource, on
/// the file it was read from and the line it starts on when the render knows them (`file=`,
/// `line=`), with the text report of that resource as the message: a workflow step running
/// `diff -o github` annotates the pull request.
pub fn github(report: &Report, show_secrets: bool) -> String {
    let mut out = String::new();
    let mut annotate = |file: Option<&str>, line: Option<u64>, title: &str, message: &str| {
        let mut properties = Vec::new();
        if let Some(file) = file {
            properties.push(format!("file={}", github_property(file)));
            if let Some(line) = line {
                properties.push(format!("line={line}"));
            }
        }
        properties.push(format!("title={}", github_property(title)));
        let message = crate::diag::escape_controls(message).into_owned();
        let _ = writeln!(out, "::notice {}::{}", properties.join(","), github_data(message.trim_end()));
    };
    for (verb, list) in [("removed", &report.removed), ("added", &report.added)] {
        for whole in list {
            let title = format!("{} {verb}", whole.id.label());
            annotate(whole.file.as_deref(), whole.line, &title, &documents(&[whole], show_secrets));
        }
    }
    for changed in &report.changed {
        let title = match &changed.renamed_from {
            Some((from, _)) => format!("{} changed (renamed from {})", changed.id.label(), from.label()),
            None => format!("{} changed", changed.id.label()),
        };
        annotate(
            changed.file.as_deref(),
            changed.line,
            &title,
            &changed_text(changed, show_secrets, report.max_diff_lines),
        );
    }
    if report.is_empty() {
        annotate(
            None,
            None,
            "no differences",
            &format!("no differences between {} and {}", report.sides[0], report.sides[1]),
        );
    }
    for note in notes(report) {
        annotate(None, None, "diff", &note);
    }
    out
}

/// A workflow command's message: `%`, CR and LF escaped as the runner reads them back.
fn github_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: the message's escapes, and `:` and `,`.
fn github_property(text: &str) -> String {
    let text = crate::diag::escape_controls(text).into_owned();
    github_data(&text).replace(':', "%3A").replace(',', "%2C")
}

/// A Secret (or a map of entries at a Secret's root) with its `data` and `stringData` redacted
/// whatever their shape: each value of a map, and a string, a list or any other value whole. The
/// API server refuses those shapes, but the input is not the API server's: a `stringData` given
/// as a string was printed in full.
fn redacted(value: &Value) -> Value {
    let mut value = value.clone();
    if let Value::Object(map) = &mut value {
        for field in ["data", "stringData"] {
            match map.get_mut(field) {
                Some(Value::Object(entries)) => entries.values_mut().for_each(|v| *v = json!(REDACTED)),
                None | Some(Value::Null) => {}
                Some(other) => *other = json!(REDACTED),
            }
        }
    }
    value
}

/// A change's values with secret entries redacted: for a map of added or removed entries at the
/// Secret's root, the `data`/`stringData` inside; below them, every value.
fn shown_change(id: &Id, path: &str, change: &Change, show_secrets: bool) -> Change {
    if show_secrets || !id.is_secret() {
        return change.clone();
    }
    let hide = |value: &Value| -> Value {
        if path.is_empty() {
            redacted(value)
        } else if path.starts_with("data") || path.starts_with("stringData") {
            match value {
                Value::Object(map) => Value::Object(map.keys().map(|k| (k.clone(), json!(REDACTED))).collect()),
                _ => json!(REDACTED),
            }
        } else {
            value.clone()
        }
    };
    match change {
        Change::Value { old, new } => Change::Value { old: hide(old), new: hide(new) },
        Change::Added(value) => Change::Added(hide(value)),
        Change::Removed(value) => Change::Removed(hide(value)),
        Change::Order { old, new } if path.starts_with("data") || path.starts_with("stringData") => {
            let hidden = |names: &[String]| names.iter().map(|_| REDACTED.to_string()).collect();
            Change::Order { old: hidden(old), new: hidden(new) }
        }
        Change::Order { .. } => change.clone(),
    }
}

fn indented(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines().map(|line| format!("{pad}{line}\n")).collect()
}

fn entries(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len(),
        Value::Array(list) => list.len(),
        _ => 1,
    }
}

fn count(n: usize, kind: &str, verb: &str) -> String {
    match n {
        1 => format!("one {kind} entry {verb}"),
        2 => format!("two {kind} entries {verb}"),
        3 => format!("three {kind} entries {verb}"),
        n => format!("{n} {kind} entries {verb}"),
    }
}

/// Map or list entries that exist on one side only.
fn entries_change(out: &mut String, sign: &str, verb: &str, value: &Value) {
    let kind = if value.is_array() { "list" } else { "map" };
    let _ = writeln!(out, "  {sign} {}:", count(entries(value), kind, verb));
    out.push_str(&indented(&to_yaml(value), 4));
}

/// A scalar as dyff shows it: a string as it is, unless it holds control characters; then as
/// `render` prints it, quoted with YAML escapes (`"shop:2.0\rshop:1.0"`).
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) if !text.chars().any(char::is_control) => text.clone(),
        other => to_yaml(other).trim_end().to_string(),
    }
}

fn value_change(out: &mut String, old: &Value, new: &Value, max_lines: usize) {
    if let (Value::String(a), Value::String(b)) = (old, new) {
        let lines = a.lines().count().saturating_add(b.lines().count());
        if (a.contains('\n') || b.contains('\n')) && lines > max_lines {
            let _ = writeln!(
                out,
                "  ± value change in multiline text ({} lines before, {} after: more than {max_lines} lines \
                 together, so shown whole, not line by line; raise --max-diff-lines to diff it)",
                a.lines().count(),
                b.lines().count()
            );
            for (sign, text) in [("-", a), ("+", b)] {
                for (i, line) in text.lines().enumerate() {
                    let _ = writeln!(out, "{}{line}", if i == 0 { format!("    {sign} ") } else { " ".repeat(6) });
                }
            }
            return;
        }
        if a.contains('\n') || b.contains('\n') {
            let diff = similar::TextDiff::from_lines(a.as_str(), b.as_str());
            let (mut inserts, mut deletes) = (0, 0);
            let mut lines = String::new();
            for change in diff.iter_all_changes() {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => {
                        deletes += 1;
                        "-"
                    }
                    similar::ChangeTag::Insert => {
                        inserts += 1;
                        "+"
                    }
                    similar::ChangeTag::Equal => " ",
                };
                let _ = writeln!(lines, "    {sign} {}", change.value().trim_end_matches('\n'));
            }
            let plural = |n: usize, word: &str| match n {
                0 => format!("no {word}s"),
                1 => format!("one {word}"),
                n => format!("{n} {word}s"),
            };
            let _ = writeln!(
                out,
                "  ± value change in multiline text ({}, {})",
                plural(inserts, "insert"),
                plural(deletes, "deletion")
            );
            out.push_str(&lines);
            return;
        }
    }
    let types_differ = std::mem::discriminant(old) != std::mem::discriminant(new);
    let _ = writeln!(out, "  ± {}", if types_differ { "type change" } else { "value change" });
    out.push_str(&indented(&format!("- {}", scalar_text(old)), 4));
    out.push_str(&indented(&format!("+ {}", scalar_text(new)), 4));
}

/// The report as JSON, for CI: `added`, `removed` (resources by identity), `changed` (each
/// resource's changes: `path`, `change` and the values; `renamedFrom` and `similarity` for a
/// renamed one) and `notes`.
pub fn json(report: &Report, show_secrets: bool) -> Value {
    let id_json = |id: &Id| {
        let mut object =
            json!({"apiVersion": id.api_version, "kind": id.kind, "namespace": id.namespace, "name": id.name});
        if let (false, Value::Object(map)) = (id.file.is_empty(), &mut object) {
            map.insert("file".into(), json!(id.file));
        }
        object
    };
    let changed: Vec<Value> = report
        .changed
        .iter()
        .map(|changed| {
            let id = &changed.id;
            let changes: Vec<Value> = changed
                .changes
                .iter()
                .map(|(path, change)| match shown_change(id, path, change, show_secrets) {
                    Change::Value { old, new } => json!({"path": path, "change": "value", "old": old, "new": new}),
                    Change::Added(value) => json!({"path": path, "change": "added", "value": value}),
                    Change::Removed(value) => json!({"path": path, "change": "removed", "value": value}),
                    Change::Order { old, new } => json!({"path": path, "change": "order", "old": old, "new": new}),
                })
                .collect();
            let mut entry = json!({"resource": id_json(id), "changes": changes});
            if let (Some((from, score)), Value::Object(map)) = (&changed.renamed_from, &mut entry) {
                map.insert("renamedFrom".into(), id_json(from));
                map.insert("similarity".into(), json!(score));
            }
            entry
        })
        .collect();
    let ids = |list: &[Whole]| -> Vec<Value> { list.iter().map(|whole| id_json(&whole.id)).collect() };
    let mut out = BTreeMap::new();
    out.insert("added", Value::Array(ids(&report.added)));
    out.insert("removed", Value::Array(ids(&report.removed)));
    out.insert("changed", Value::Array(changed));
    out.insert("notes", json!(notes(report)));
    json!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::MAX_LINE_DIFF_LINES;

    #[test]
    fn long_multiline_text_is_shown_whole_not_line_diffed() {
        let side = |tag: &str| (0..6_000).map(|i| format!("{tag} {i}\n")).collect::<String>();
        let mut out = String::new();
        value_change(&mut out, &Value::String(side("old")), &Value::String(side("new")), MAX_LINE_DIFF_LINES);
        let first = out.lines().next().unwrap_or_default();
        assert!(first.contains("6000 lines before, 6000 after") && first.contains("not line by line"), "{first}");
        assert!(out.contains("    - old 0\n      old 1\n") && out.contains("    + new 0\n      new 1\n"));
        let mut short = String::new();
        value_change(&mut short, &Value::String("a\nb\n".into()), &Value::String("a\nc\n".into()), MAX_LINE_DIFF_LINES);
        assert!(short.starts_with("  ± value change in multiline text (one insert, one deletion)"), "{short}");
    }
}
