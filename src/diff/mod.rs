//! `diff`: two renders compared resource by resource, and each changed resource field by field,
//! printed the way dyff (homeport/dyff) prints a comparison of Kubernetes manifests: a path, the
//! resource it is in, and what changed there; list entries that carry a `name` are matched by
//! it (`containers.app.image`) and a change of their order is reported, other lists by
//! position; a multi-line string shows its changed lines. A resource whose identity changed (a
//! generator's hash suffix, an apiVersion bump) is paired with the most similar one of its kind
//! ([`rename`]) and shown with its changes, as dyff's rename detection does. No I/O: the CLI
//! renders both sides and prints the report ([`output`]).

mod filter;
mod output;
mod rename;

pub use filter::Filter;
pub use output::{brief, github, json, text};

use crate::doc::Value;
use crate::krm::{name_of, namespace_of, Item};
use std::collections::{HashMap, HashSet};

/// A resource's identity: apiVersion, kind, namespace, name; for a document without a name (a
/// `kustomization.yaml`), the file it comes from and its position there, so that two unnamed
/// documents of one kind are paired by file, not by their order in the render.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Empty for a named document; else its file (relative to its side's root), `#N` after it
    /// for the N-th (from 0) document of the file when N > 0.
    pub file: String,
}

impl Id {
    fn of(document: &Document) -> Id {
        let value: &Value = &document.item;
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let name = name_of(value).to_string();
        let file = match (&document.location, name.is_empty()) {
            (Some((path, 0)), true) => path.clone(),
            (Some((path, index)), true) => format!("{path}#{index}"),
            _ => String::new(),
        };
        Id {
            api_version: text("apiVersion"),
            kind: text("kind"),
            namespace: namespace_of(value).to_string(),
            name,
            file,
        }
    }

    /// `apiVersion/Kind/namespace/name`, as dyff names a document (no namespace part without
    /// one); an unnamed document as `apiVersion/Kind (file)`.
    pub fn label(&self) -> String {
        let base = match (self.namespace.as_str(), self.name.as_str()) {
            ("", "") => format!("{}/{}", self.api_version, self.kind),
            (namespace, "") => format!("{}/{}/{namespace}", self.api_version, self.kind),
            ("", name) => format!("{}/{}/{name}", self.api_version, self.kind),
            (namespace, name) => format!("{}/{}/{namespace}/{name}", self.api_version, self.kind),
        };
        match self.file.as_str() {
            "" => base,
            file => format!("{base} ({file})"),
        }
    }

    fn is_secret(&self) -> bool {
        self.api_version == "v1" && self.kind == "Secret"
    }
}

/// One side's object as the CLI hands it over: the object, where it was read from (its file
/// relative to the side's root, and its index there) when the render knows, and the file as the
/// user's shell names it with the line the object starts on (for `-o github`).
pub struct Document {
    pub item: Item,
    pub location: Option<(String, u64)>,
    pub file: Option<String>,
    pub line: Option<u64>,
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
    /// The entries of a list matched by name that both sides hold, in another order (the names
    /// in the old order, then in the new), as dyff's "order changed".
    Order {
        old: Vec<String>,
        new: Vec<String>,
    },
}

/// A resource on one side only, printed whole.
#[derive(Debug)]
pub struct Whole {
    pub id: Id,
    pub value: Value,
    pub file: Option<String>,
    pub line: Option<u64>,
}

/// A resource found on both sides that differs: by identity, or renamed (the old identity and
/// how similar the two are, in percent).
#[derive(Debug)]
pub struct Changed {
    pub id: Id,
    pub renamed_from: Option<(Id, u32)>,
    pub changes: Vec<(String, Change)>,
    pub file: Option<String>,
    pub line: Option<u64>,
}

/// Every difference between two renders.
#[derive(Debug, Default)]
pub struct Report {
    pub added: Vec<Whole>,
    pub removed: Vec<Whole>,
    /// Each changed resource, with its changes by path (`spec.replicas`).
    pub changed: Vec<Changed>,
    /// Identities that more than one resource of the old (then the new) side carries, with how
    /// many, in the order they first appear: not a difference, but the pairing is a guess.
    pub duplicates: [Vec<(Id, usize)>; 2],
    /// `--max-diff-lines`: the text report diffs longer multi-line strings whole, not by line.
    pub max_diff_lines: usize,
    /// How the report names the two sides (`a`, `path as of HEAD~1`).
    pub sides: [String; 2],
    /// Items of each side marked `config.kubernetes.io/local-config` that were left out.
    pub local_config_left_out: [usize; 2],
    /// Kinds with more removed and added resources than rename detection compares (see
    /// [`rename::MAX_PAIRS`]): their resources are shown removed and added whole.
    pub renames_not_detected: Vec<String>,
    /// Resources that differ but that `--include`/`--exclude` left out whole.
    pub filtered_out: usize,
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
/// identical inputs compare equal; the repeats are listed in [`Report::duplicates`]. What is
/// left on each side is paired by [`rename::detect`]: same kind, most similar content.
pub fn compare(old: &[Document], new: &[Document]) -> Report {
    let old_ids: Vec<Id> = old.iter().map(Id::of).collect();
    let new_ids: Vec<Id> = new.iter().map(Id::of).collect();
    let mut old_by_id: HashMap<&Id, Vec<usize>> = HashMap::new();
    for (i, id) in old_ids.iter().enumerate() {
        old_by_id.entry(id).or_default().push(i);
    }
    // The old document each new one is paired with, and the rename score when by rename.
    let mut pair: Vec<Option<(usize, Option<u32>)>> = vec![None; new.len()];
    let mut old_paired = vec![false; old.len()];
    let mut new_count: HashMap<&Id, usize> = HashMap::new();
    for (i, id) in new_ids.iter().enumerate() {
        let nth = new_count.entry(id).or_default();
        if let Some(&j) = old_by_id.get(id).and_then(|list| list.get(*nth)) {
            pair[i] = Some((j, None));
            old_paired[j] = true;
        }
        *nth += 1;
    }
    let removed: Vec<usize> = (0..old.len()).filter(|j| !old_paired[*j]).collect();
    let added: Vec<usize> = (0..new.len()).filter(|i| pair[*i].is_none()).collect();
    let value = |documents: &[Document], i: usize| -> Value { (*documents[i].item).clone() };
    let renames = rename::detect(
        &removed.iter().map(|&j| (&old_ids[j], &*old[j].item)).collect::<Vec<_>>(),
        &added.iter().map(|&i| (&new_ids[i], &*new[i].item)).collect::<Vec<_>>(),
    );
    for (r, a, score) in renames.pairs {
        pair[added[a]] = Some((removed[r], Some(score)));
        old_paired[removed[r]] = true;
    }
    let mut report = Report {
        duplicates: [repeated(&old_ids), repeated(&new_ids)],
        max_diff_lines: MAX_LINE_DIFF_LINES,
        renames_not_detected: renames.skipped_kinds,
        ..Report::default()
    };
    for (i, document) in new.iter().enumerate() {
        match pair[i] {
            None => report.added.push(Whole {
                id: new_ids[i].clone(),
                value: value(new, i),
                file: document.file.clone(),
                line: document.line,
            }),
            Some((j, score)) => {
                let mut changes = Vec::new();
                walk(&old[j].item, &document.item, "", &mut changes);
                let renamed_from = score.map(|score| (old_ids[j].clone(), score));
                if !changes.is_empty() || renamed_from.is_some() {
                    report.changed.push(Changed {
                        id: new_ids[i].clone(),
                        renamed_from,
                        changes,
                        file: document.file.clone(),
                        line: document.line,
                    });
                }
            }
        }
    }
    for (j, document) in old.iter().enumerate() {
        if !old_paired[j] {
            report.removed.push(Whole {
                id: old_ids[j].clone(),
                value: value(old, j),
                file: document.file.clone(),
                line: document.line,
            });
        }
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
                // dyff's "order changed": the entries both sides hold, in another order.
                let old_common: Vec<String> =
                    old_names.iter().filter(|n| new_at.contains(*n)).map(|n| n.to_string()).collect();
                let new_common: Vec<String> =
                    new_names.iter().filter(|n| old_at.contains_key(*n)).map(|n| n.to_string()).collect();
                if old_common != new_common {
                    changes.push((path.to_string(), Change::Order { old: old_common, new: new_common }));
                }
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

/// The most lines (both sides together) a multi-line string is diffed line by line: the line
/// diff takes time in proportion to the lines times the changed lines (50 000 changed lines took
/// 48 s); a longer text is shown whole, before and after, with a note saying so and naming
/// `--max-diff-lines`, whose default this is.
pub const MAX_LINE_DIFF_LINES: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_entries_are_matched_by_name() {
        let old = serde_json::json!({"l": [{"name": "a", "v": 1}, {"name": "b", "v": 1}, {"name": "c"}]});
        let new = serde_json::json!({"l": [{"name": "b", "v": 2}, {"name": "a", "v": 1}, {"name": "d"}]});
        let mut changes = Vec::new();
        walk(&old, &new, "", &mut changes);
        let paths: Vec<&str> = changes.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["l", "l", "l", "l.b.v"]);
        assert!(matches!(&changes[0].1, Change::Order { old, new } if old == &["a", "b"] && new == &["b", "a"]));
        assert!(matches!(&changes[1].1, Change::Removed(Value::Array(v)) if v[0]["name"] == "c"));
        assert!(matches!(&changes[2].1, Change::Added(Value::Array(v)) if v[0]["name"] == "d"));
    }
}
