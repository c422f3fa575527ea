//! `diff`: two renders compared resource by resource, and each changed resource field by field,
//! printed the way dyff (homeport/dyff) prints a comparison of Kubernetes manifests: a path, the
//! resource it is in, and what changed there; list entries that carry a `name` are matched by
//! it (`containers.app.image`), other lists by position; a multi-line string shows its changed
//! lines. No I/O: the CLI renders both sides and prints the report.

use crate::doc::{to_yaml, Value};
use crate::krm::{name_of, namespace_of, Item, REDACTED};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

/// A resource's identity: apiVersion, kind, namespace, name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl Id {
    fn of(value: &Value) -> Id {
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        Id {
            api_version: text("apiVersion"),
            kind: text("kind"),
            namespace: namespace_of(value).to_string(),
            name: name_of(value).to_string(),
        }
    }

    /// `apiVersion/Kind/namespace/name`, as dyff names a document (no namespace part without one).
    pub fn label(&self) -> String {
        match self.namespace.as_str() {
            "" => format!("{}/{}/{}", self.api_version, self.kind, self.name),
            namespace => format!("{}/{}/{namespace}/{}", self.api_version, self.kind, self.name),
        }
    }

    fn is_secret(&self) -> bool {
        self.api_version == "v1" && self.kind == "Secret"
    }
}

/// One difference inside a resource.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The value at the path was replaced (`old` and `new` are scalars, or values of other types).
    Value {
        old: Value,
        new: Value,
    },
    /// Map entries or list entries that exist on one side only.
    Added(Value),
    Removed(Value),
}

/// Every difference between two renders.
#[derive(Debug, Default)]
pub struct Report {
    pub added: Vec<(Id, Value)>,
    pub removed: Vec<(Id, Value)>,
    /// Each changed resource, with its changes by path (`spec.replicas`).
    pub changed: Vec<(Id, Vec<(String, Change)>)>,
    /// Identities that more than one resource of the old (then the new) side carries, with how
    /// many, in the order they first appear: not a difference, but the pairing is a guess.
    pub duplicates: [Vec<(Id, usize)>; 2],
    /// `--max-diff-lines`: the text report diffs longer multi-line strings whole, not by line.
    pub max_diff_lines: usize,
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// The identities of `items` that repeat, with how many carry each, in order of first appearance.
fn repeated(ids: &[Id]) -> Vec<(Id, usize)> {
    let mut counts: HashMap<&Id, usize> = HashMap::new();
    ids.iter().for_each(|id| *counts.entry(id).or_default() += 1);
    let mut seen = HashSet::new();
    ids.iter()
        .filter(|id| counts.get(id).is_some_and(|n| *n > 1) && seen.insert(*id))
        .map(|id| (id.clone(), counts.get(id).copied().unwrap_or_default()))
        .collect()
}

/// Compares the resources of two renders; the report lists them in the order of `new`, then the
/// removed ones in the order of `old`. Resources that share an identity are paired by position
/// among them (the second `v1/ConfigMap/a` of one side with the second of the other), so two
/// identical inputs compare equal; the repeats are listed in [`Report::duplicates`].
pub fn compare(old: &[Item], new: &[Item]) -> Report {
    let old_ids: Vec<Id> = old.iter().map(|item| Id::of(item)).collect();
    let new_ids: Vec<Id> = new.iter().map(|item| Id::of(item)).collect();
    let mut old_by_id: HashMap<&Id, Vec<&Value>> = HashMap::new();
    for (id, item) in old_ids.iter().zip(old) {
        old_by_id.entry(id).or_default().push(&**item);
    }
    let mut new_count: HashMap<&Id, usize> = HashMap::new();
    let mut report = Report {
        duplicates: [repeated(&old_ids), repeated(&new_ids)],
        max_diff_lines: MAX_LINE_DIFF_LINES,
        ..Report::default()
    };
    for (id, item) in new_ids.iter().zip(new) {
        let nth = new_count.entry(id).or_default();
        let before = old_by_id.get(id).and_then(|values| values.get(*nth));
        *nth += 1;
        match before {
            None => report.added.push((id.clone(), (**item).clone())),
            Some(before) => {
                let mut changes = Vec::new();
                walk(before, item, "", &mut changes);
                if !changes.is_empty() {
                    report.changed.push((id.clone(), changes));
                }
            }
        }
    }
    let mut old_count: HashMap<&Id, usize> = HashMap::new();
    for (id, item) in old_ids.iter().zip(old) {
        let nth = old_count.entry(id).or_default();
        if *nth >= new_count.get(id).copied().unwrap_or_default() {
            report.removed.push((id.clone(), (**item).clone()));
        }
        *nth += 1;
    }
    report
}

fn join(path: &str, part: &str) -> String {
    match path {
        "" => part.to_string(),
        _ => format!("{path}.{part}"),
    }
}

/// The names of a list's entries, when every entry is a mapping with a distinct string `name`.
fn names(list: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = list.iter().map(|entry| entry.get("name").and_then(Value::as_str)).collect::<Option<_>>()?;
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == names.len()).then_some(names)
}

fn walk(old: &Value, new: &Value, path: &str, changes: &mut Vec<(String, Change)>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let removed: serde_json::Map<String, Value> =
                a.iter().filter(|(k, _)| !b.contains_key(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            let added: serde_json::Map<String, Value> =
                b.iter().filter(|(k, _)| !a.contains_key(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            if !removed.is_empty() {
                changes.push((path.to_string(), Change::Removed(Value::Object(removed))));
            }
            if !added.is_empty() {
                changes.push((path.to_string(), Change::Added(Value::Object(added))));
            }
            for (key, value) in b {
                if let Some(before) = a.get(key) {
                    walk(before, value, &join(path, key), changes);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => match (names(a), names(b)) {
            (Some(old_names), Some(new_names)) => {
                // By name through a map: a search of the other list per entry is quadratic
                // (40 000 entries took over a minute).
                let old_at: HashMap<&str, usize> = old_names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
                let new_at: HashSet<&str> = new_names.iter().copied().collect();
                let removed: Vec<Value> =
                    a.iter().zip(&old_names).filter(|(_, n)| !new_at.contains(*n)).map(|(v, _)| v.clone()).collect();
                let added: Vec<Value> = b
                    .iter()
                    .zip(&new_names)
                    .filter(|(_, n)| !old_at.contains_key(*n))
                    .map(|(v, _)| v.clone())
                    .collect();
                if !removed.is_empty() {
                    changes.push((path.to_string(), Change::Removed(Value::Array(removed))));
                }
                if !added.is_empty() {
                    changes.push((path.to_string(), Change::Added(Value::Array(added))));
                }
                for (value, name) in b.iter().zip(&new_names) {
                    if let Some(&i) = old_at.get(name) {
                        walk(&a[i], value, &join(path, name), changes);
                    }
                }
            }
            _ => {
                for (i, (before, value)) in a.iter().zip(b).enumerate() {
                    walk(before, value, &join(path, &i.to_string()), changes);
                }
                if a.len() > b.len() {
                    changes.push((path.to_string(), Change::Removed(Value::Array(a[b.len()..].to_vec()))));
                }
                if b.len() > a.len() {
                    changes.push((path.to_string(), Change::Added(Value::Array(b[a.len()..].to_vec()))));
                }
            }
        },
        _ => changes.push((path.to_string(), Change::Value { old: old.clone(), new: new.clone() })),
    }
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

/// The report as text, as dyff lays it out. Every value, key and name in it comes from the
/// input, so its control characters are made visible ([`crate::diag::escape_controls`]): a
/// carriage return or an ANSI escape would otherwise make a changed value look unchanged or
/// hide a line of the report.
pub fn text(report: &Report, show_secrets: bool) -> String {
    crate::diag::escape_controls(&raw_text(report, show_secrets)).into_owned()
}

fn raw_text(report: &Report, show_secrets: bool) -> String {
    let mut out = String::new();
    let documents = |values: &[(Id, Value)]| -> String {
        values
            .iter()
            .map(|(id, value)| {
                let value = if id.is_secret() && !show_secrets { redacted(value) } else { value.clone() };
                format!("---\n{}", to_yaml(&value))
            })
            .collect()
    };
    for (sign, verb, documents_of) in [("-", "removed", &report.removed), ("+", "added", &report.added)] {
        let n = documents_of.len();
        if n == 0 {
            continue;
        }
        let what = if n == 1 { "one document".to_string() } else { format!("{n} documents") };
        let _ = writeln!(out, "(root level)\n{sign} {what} {verb}:");
        out.push_str(&indented(&documents(documents_of), 2));
        out.push('\n');
    }
    for (id, changes) in &report.changed {
        for (path, change) in changes {
            let shown_path = if path.is_empty() { "(root level)" } else { path.as_str() };
            let _ = writeln!(out, "{shown_path}  ({})", id.label());
            match shown_change(id, path, change, show_secrets) {
                Change::Value { old, new } => value_change(&mut out, &old, &new, report.max_diff_lines),
                Change::Added(value) => entries_change(&mut out, "+", "added", &value),
                Change::Removed(value) => entries_change(&mut out, "-", "removed", &value),
            }
            out.push('\n');
        }
    }
    out
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

/// The most lines (both sides together) a multi-line string is diffed line by line: the line
/// diff takes time in proportion to the lines times the changed lines (50 000 changed lines took
/// 48 s); a longer text is shown whole, before and after, with a note saying so and naming
/// `--max-diff-lines`, whose default this is.
pub const MAX_LINE_DIFF_LINES: usize = 10_000;

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

/// The report as JSON, for CI: `added`, `removed` (resources by identity) and `changed` (each
/// resource's changes: `path`, `change` and the values).
pub fn json(report: &Report, show_secrets: bool) -> Value {
    let id_json =
        |id: &Id| json!({"apiVersion": id.api_version, "kind": id.kind, "namespace": id.namespace, "name": id.name});
    let changed: Vec<Value> = report
        .changed
        .iter()
        .map(|(id, changes)| {
            let changes: Vec<Value> = changes
                .iter()
                .map(|(path, change)| match shown_change(id, path, change, show_secrets) {
                    Change::Value { old, new } => json!({"path": path, "change": "value", "old": old, "new": new}),
                    Change::Added(value) => json!({"path": path, "change": "added", "value": value}),
                    Change::Removed(value) => json!({"path": path, "change": "removed", "value": value}),
                })
                .collect();
            json!({"resource": id_json(id), "changes": changes})
        })
        .collect();
    let ids = |list: &[(Id, Value)]| -> Vec<Value> { list.iter().map(|(id, _)| id_json(id)).collect() };
    let mut out = BTreeMap::new();
    out.insert("added", Value::Array(ids(&report.added)));
    out.insert("removed", Value::Array(ids(&report.removed)));
    out.insert("changed", Value::Array(changed));
    json!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn named_entries_are_matched_by_name() {
        let old = serde_json::json!({"l": [{"name": "a", "v": 1}, {"name": "b", "v": 1}, {"name": "c"}]});
        let new = serde_json::json!({"l": [{"name": "b", "v": 2}, {"name": "a", "v": 1}, {"name": "d"}]});
        let mut changes = Vec::new();
        walk(&old, &new, "", &mut changes);
        let paths: Vec<&str> = changes.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["l", "l", "l.b.v"]);
        assert!(matches!(&changes[0].1, Change::Removed(Value::Array(v)) if v[0]["name"] == "c"));
        assert!(matches!(&changes[1].1, Change::Added(Value::Array(v)) if v[0]["name"] == "d"));
    }
}
