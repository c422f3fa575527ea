//! Strategic merge patch, written here because no maintained Rust crate implements it. It follows
//! what `kustomize build` does for `patches:` — kyaml's merge2 walk with
//! `ListIncreaseDirection: Prepend` — so that a patch gives the same list order and the same
//! elements as kustomize:
//!
//! - Maps merge key by key (`null` deletes). Fields the patch does not name are walked too: kyaml
//!   re-merges every merge list of the resource, so its rules below (duplicate keys collapse, a
//!   port without protocol can absorb another) apply to lists the patch never mentions.
//! - A list whose schema has `x-kubernetes-patch-strategy: merge` merges by its keys:
//!   `x-kubernetes-list-map-keys` when the field has them (container ports: `containerPort` and
//!   `protocol`), else the patch merge key; without keys it is a set of scalars. Other lists, and
//!   every list of a kind we have no schema for, are replaced (kustomize does the same for custom
//!   resources, and for map lists without a patch strategy such as status conditions).
//! - Keyed list order (kyaml's `setAssociativeSequenceElements` and `appendListNode`): the key
//!   tuples of the patch's elements, then of the original's, each once. Key columns no element
//!   fills are dropped. With several keys, a tuple missing a key takes the missing values from
//!   the first complete tuple with the same first key that comes before it, else from the last
//!   one after it (kyaml's order-dependent `mergeValues`). Each tuple finds the first original
//!   and the first patch element whose present keys equal it; the merged element (the original
//!   merged in place, or the patch's own) joins the new list, replacing any element already there
//!   that matches the tuple, where an empty value matches any value. Then each surviving original
//!   element is set again: with one key it replaces the elements with its key in place, so the
//!   result is the patch's elements in patch order, then the others in original order; with
//!   several keys the elements matching its keys are removed and it is appended, so originals
//!   move to the end in original order, and one that misses a key removes every element with its
//!   first key (hence `[53, 80]` patched with `[80/UDP]` stays `[53, 80]`). A list the original
//!   lacks is merged with itself the same way.
//! - Sets of scalars: the patch's values, then the original's others, each once; `null`s go.
//! - `$patch: delete` on an element removes the original elements matching its tuple;
//!   `$patch: replace` on an element is overridden by the original element (kyaml puts the
//!   original back when it re-sets it); `$patch: merge` merges. A list's first element with a
//!   `$patch` field, when that is its only field, is the list's directive: `delete` drops the
//!   list, `replace` makes it the patch's elements, `merge` merges; elements with that directive
//!   are removed from the patch. `$patch: replace | delete` on a map replaces or deletes it.
//!
//! kustomize leaves `$setElementOrder/<list>`, `$retainKeys` and `$deleteFromPrimitiveList/<list>`
//! in its output as fields and applies none of them, which gives an invalid resource; here they
//! do what apimachinery's `strategicpatch` does (order, retain, delete) and are removed. Elements
//! of a merge list the patch touches must be mappings with their first merge key (kyaml would
//! silently drop every keyed element when one lacks it); lists the patch does not touch are left
//! as they are when they do not qualify. In a list the original lacks, an element kyaml never
//! looks up (a later duplicate key) keeps its raw `$patch` and nulls there; here it is merged
//! like the others. The schema is Kubernetes 1.37's: kustomize's built-in one is 1.21's, so it
//! replaces lists added since (`schedulingGates`, `resourceClaims`) that merge here.

use super::merge_keys::{DEFINITIONS, KINDS};
use super::schema::Field;
use crate::doc::{Map, Value};
use crate::limits::MAX_DEPTH;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// The root definition for a built-in kind, `None` for kinds we do not know.
pub fn schema_of(api_version: &str, kind: &str) -> Option<usize> {
    static INDEX: OnceLock<HashMap<(&'static str, &'static str), usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| KINDS.iter().map(|k| ((k.api_version, k.kind), k.schema)).collect());
    index.get(&(api_version, kind)).copied()
}

fn fields(schema: Option<usize>) -> &'static [Field] {
    schema.and_then(|s| DEFINITIONS.get(s)).map_or(&[], |(_, fields)| fields)
}

fn field(schema: Option<usize>, name: &str) -> Option<&'static Field> {
    fields(schema).iter().find(|f| f.name == name)
}

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Why a strategic merge patch does not apply: where (a JSON pointer into the resource, the
/// patch's directives among its keys: `/spec/$setElementOrder/containers`; empty at the top)
/// and what is wrong. [`super`] points the result at the plain part of the place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeError {
    pub path: String,
    pub message: String,
}

impl MergeError {
    fn at(path: impl Into<String>, message: String) -> Self {
        MergeError { path: path.into(), message }
    }
}

/// `<path>: <message>`.
impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Applies `patch` to `original` (both mappings). Errors leave `original` untouched only if the
/// caller works on a copy; [`super`] does.
pub fn apply(original: &mut Map, patch: &Map, schema: Option<usize>) -> Result<(), MergeError> {
    merge_map(original, patch, schema, "", 0)
}

/// A value as a hashable key (set elements, `$setElementOrder`), so list work stays linear.
fn key_of(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn directive(patch: &Map) -> Option<&str> {
    patch.get(PATCH).and_then(Value::as_str)
}

/// A patch value with its directives removed, for places where it is set rather than merged.
fn without_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(k, _)| !k.starts_with('$')).map(|(k, v)| (k.clone(), without_directives(v))).collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| i.as_object().is_none_or(|m| directive(m).is_none()))
                .map(without_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

fn merge_map(
    original: &mut Map,
    patch: &Map,
    schema: Option<usize>,
    path: &str,
    depth: usize,
) -> Result<(), MergeError> {
    if depth > MAX_DEPTH {
        return Err(MergeError::at(path, format!("the patch nests deeper than {MAX_DEPTH} levels: flatten it")));
    }
    match directive(patch) {
        // kyaml takes the patch's map and walks it against itself.
        Some("replace") => original.clear(),
        Some("merge") | None => {}
        Some("delete") => {
            return Err(MergeError::at(
                path,
                "$patch: delete is only valid inside a list or as a field's value".to_string(),
            ))
        }
        Some(other) => {
            return Err(MergeError::at(
                path,
                format!("unknown $patch directive {other:?} (expected replace, delete or merge)"),
            ))
        }
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        let child_path = format!("{path}/{key}");
        let field = field(schema, key);
        // The schema knows this field's shape: a list where the kind has a mapping (or the other
        // way round) would break the resource, as apimachinery's typed conversion would refuse it.
        match (field, value) {
            (Some(f), Value::Array(_)) if !f.list && f.schema.is_some() => {
                return Err(MergeError::at(
                    &child_path,
                    "expected a mapping, got a list (remove the \"- \")".to_string(),
                ));
            }
            (Some(f), Value::Object(child)) if f.list && directive(child) != Some("delete") => {
                return Err(MergeError::at(
                    &child_path,
                    "expected a list, got a mapping; start each entry with \"- \"".to_string(),
                ));
            }
            _ => {}
        }
        match value {
            Value::Null => {
                original.shift_remove(key);
            }
            Value::Object(child_patch) if directive(child_patch) == Some("delete") => {
                original.shift_remove(key);
            }
            Value::Object(child_patch) => match original.get_mut(key) {
                Some(Value::Object(child)) => {
                    merge_map(child, child_patch, field.and_then(|f| f.schema), &child_path, depth + 1)?
                }
                _ => {
                    let mut child = Map::new();
                    merge_map(&mut child, child_patch, field.and_then(|f| f.schema), &child_path, depth + 1)?;
                    original.insert(key.clone(), Value::Object(child));
                }
            },
            Value::Array(items) => {
                let merged = match field {
                    Some(f) if f.merge => {
                        let existing = match original.get_mut(key) {
                            Some(Value::Array(existing)) => Some(std::mem::take(existing)),
                            _ => None,
                        };
                        merge_list(existing, items, f, &child_path, depth + 1)?
                    }
                    _ => Some(replace_list(items, &child_path)?),
                };
                match merged {
                    Some(list) => {
                        original.insert(key.clone(), Value::Array(list));
                    }
                    None => {
                        original.shift_remove(key);
                    }
                }
            }
            scalar => {
                original.insert(key.clone(), scalar.clone());
            }
        }
    }
    // kyaml walks the fields only the original has as well.
    for f in fields(schema) {
        if !patch.contains_key(f.name) {
            if let Some(value) = original.get_mut(f.name) {
                normalize(value, f, depth + 1);
            }
        }
    }
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Value::Array(remove) = value else {
                return Err(MergeError::at(format!("{path}/{key}"), "expected a list of values to delete".to_string()));
            };
            if let Some(Value::Array(existing)) = original.get_mut(list) {
                let remove: HashSet<String> = remove.iter().map(key_of).collect();
                existing.retain(|item| !remove.contains(&key_of(item)));
            }
        }
    }
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix(SET_ELEMENT_ORDER) {
            let Value::Array(order) = value else {
                return Err(MergeError::at(
                    format!("{path}/{key}"),
                    format!(
                        "expected a list giving the element order, \
                     e.g. [{{name: web}}, {{name: sidecar}}], got {}",
                        crate::krm::shape_of(value)
                    ),
                ));
            };
            let merge_key = field(schema, list).and_then(|f| f.keys.first().copied());
            if let Some(Value::Array(existing)) = original.get_mut(list) {
                reorder(existing, order, merge_key);
            }
        }
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let Value::Array(keys) = retain else {
            return Err(MergeError::at(format!("{path}/$retainKeys"), "expected a list of field names".to_string()));
        };
        let keys: HashSet<&str> = keys.iter().filter_map(Value::as_str).collect();
        original.retain(|key, _| keys.contains(key.as_str()));
    }
    Ok(())
}

/// kyaml's walk of a field the patch does not name: merge lists are merged with nothing, which
/// still collapses duplicate keys and applies the multi-key rules. A list that does not qualify
/// (an element without its key, a mapping in a set) is left alone.
fn normalize(value: &mut Value, field: &Field, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Array(list) if field.merge => {
            let result = if field.keys.is_empty() {
                merge_scalars(std::mem::take(list), &[], false, "")
            } else {
                merge_keyed(std::mem::take(list), &[], false, false, field, "", depth)
            };
            match result {
                Ok(merged) => *list = merged,
                Err(Unqualified(original)) => *list = original,
                // Not reached: without a patch element nothing is merged, so nothing can fail.
                Err(Failure::Error(_)) => {}
            }
        }
        Value::Object(map) if !field.list => normalize_map(map, field.schema, depth + 1),
        _ => {}
    }
}

fn normalize_map(map: &mut Map, schema: Option<usize>, depth: usize) {
    for f in fields(schema) {
        if let Some(value) = map.get_mut(f.name) {
            normalize(value, f, depth + 1);
        }
    }
}

/// A list set without merging: a `$patch: replace` element is dropped, a `$patch: delete` one
/// makes no sense here.
fn replace_list(items: &[Value], path: &str) -> Result<Vec<Value>, MergeError> {
    let mut list = Vec::with_capacity(items.len());
    for item in items {
        match item.as_object().and_then(directive) {
            Some("replace") | Some("merge") => {}
            Some(other) => {
                return Err(MergeError::at(path, format!("$patch: {other} needs a list with a merge strategy")))
            }
            None => list.push(without_directives(item)),
        }
    }
    Ok(list)
}

/// Why a merge list could not be merged by kyaml's rules. In a list the patch touches that is an
/// error; for a list it only passes by, the original comes back untouched.
enum Failure {
    Error(MergeError),
    Unqualified(Vec<Value>),
}
use Failure::Unqualified;

impl From<MergeError> for Failure {
    fn from(err: MergeError) -> Self {
        Failure::Error(err)
    }
}

/// A merge list the patch names. `existing` is `None` when the original has no such list (kyaml
/// then merges the patch's list with itself). `Ok(None)` removes the field.
fn merge_list(
    existing: Option<Vec<Value>>,
    items: &[Value],
    field: &Field,
    path: &str,
    depth: usize,
) -> Result<Option<Vec<Value>>, MergeError> {
    // kyaml's list directive: the first element with a `$patch` field, when that is its only one.
    let list_directive = items
        .iter()
        .find_map(|i| i.as_object().filter(|m| m.contains_key(PATCH)))
        .filter(|m| m.len() == 1)
        .map(|m| m.get(PATCH).map(key_text).unwrap_or_default());
    let mut existing = existing;
    let patch: Vec<Value> = match list_directive.as_deref() {
        None => items.to_vec(),
        Some("delete") => return Ok(None),
        Some(name @ ("replace" | "merge")) => {
            if name == "replace" {
                existing = None;
            }
            // Elided as kyaml's ElementSetter does: every element with that directive, and empty ones.
            items
                .iter()
                .filter(|i| match i {
                    Value::Null => false,
                    Value::Object(m) => !m.is_empty() && m.get(PATCH).map(key_text).as_deref() != Some(name),
                    _ => true,
                })
                .cloned()
                .collect()
        }
        Some(other) => {
            return Err(MergeError::at(
                path,
                format!("unknown $patch directive {other:?} for a list (expected replace, delete or merge)"),
            ))
        }
    };
    let result = match (existing, field.keys.is_empty()) {
        (Some(dest), true) => merge_scalars(dest, &patch, true, path),
        (None, true) => merge_scalars(Vec::new(), &patch, true, path),
        (Some(dest), false) => merge_keyed(dest, &patch, false, true, field, path, depth),
        (None, false) => merge_keyed(Vec::new(), &patch, true, true, field, path, depth),
    };
    match result {
        Ok(list) => Ok(Some(list)),
        Err(Failure::Error(err)) => Err(err),
        // Only lists that the patch does not touch come back unqualified.
        Err(Unqualified(_)) => Err(MergeError::at(path, "cannot merge this list".to_string())),
    }
}

/// A merge-key value as kyaml reads it (`yaml.Node.Value`): a scalar's text, "" for null, maps
/// and lists.
fn key_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// A set of scalars (kyaml's primitive associative list): the patch's values, then the
/// original's others, each once, in first-seen order; a value the original has keeps the
/// original's last element with that text. `null`s are dropped, as kyaml's ElementSetter does.
fn merge_scalars(dest: Vec<Value>, patch: &[Value], strict: bool, path: &str) -> Result<Vec<Value>, Failure> {
    let collection = |v: &Value| v.is_object() || v.is_array();
    if patch.iter().any(collection) {
        return Err(Failure::Error(MergeError::at(
            path,
            "a list of scalars cannot merge an object element".to_string(),
        )));
    }
    if dest.iter().any(collection) {
        if !strict {
            return Err(Unqualified(dest));
        }
        return Err(Failure::Error(MergeError::at(
            path,
            "the original list holds a mapping or list where scalars belong".to_string(),
        )));
    }
    let mut order: Vec<String> = Vec::new();
    let mut chosen: HashMap<String, Value> = HashMap::new();
    for value in patch.iter().filter(|v| !v.is_null()) {
        let text = key_text(value);
        if let std::collections::hash_map::Entry::Vacant(entry) = chosen.entry(text) {
            order.push(entry.key().clone());
            entry.insert(value.clone());
        }
    }
    for value in dest.into_iter().filter(|v| !v.is_null()) {
        let text = key_text(&value);
        if !chosen.contains_key(&text) {
            order.push(text.clone());
        }
        chosen.insert(text, value);
    }
    Ok(order.into_iter().filter_map(|text| chosen.remove(&text)).collect())
}

/// The merge-key fields of an element, by key column: `None` where the field is missing.
type Keys = Vec<Option<String>>;

/// Where an element of the merged list comes from: an original element (merged in place) or a
/// patch element (merged with itself).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    Dest(usize),
    Patch(usize),
}

/// A list of slots with their key fields, indexed so that kyaml's matching stays linear: by the
/// first key's text, and by the whole key tuple. Removed rows stay as tombstones; indexes are
/// checked against the row when read.
struct Table {
    rows: Vec<(Slot, Keys, bool)>,
    by_first: HashMap<String, Vec<usize>>,
    by_tuple: HashMap<Keys, Vec<usize>>,
}

impl Table {
    fn new() -> Self {
        Table { rows: Vec::new(), by_first: HashMap::new(), by_tuple: HashMap::new() }
    }

    fn index(&mut self, row: usize, keys: &Keys) {
        if let Some(Some(first)) = keys.first() {
            self.by_first.entry(first.clone()).or_default().push(row);
        }
        self.by_tuple.entry(keys.clone()).or_default().push(row);
    }

    fn push(&mut self, slot: Slot, keys: Keys) {
        let row = self.rows.len();
        self.index(row, &keys);
        self.rows.push((slot, keys, true));
    }

    fn set(&mut self, row: usize, slot: Slot, keys: Keys) {
        if self.rows.get(row).is_some_and(|(_, old, _)| *old != keys) {
            self.index(row, &keys);
        }
        if let Some(entry) = self.rows.get_mut(row) {
            *entry = (slot, keys, true);
        }
    }

    fn remove(&mut self, row: usize) {
        if let Some(entry) = self.rows.get_mut(row) {
            entry.2 = false;
        }
    }

    /// The live rows that may have `first` as first key, or exactly `tuple`.
    fn candidates(&self, values: &[String], columns: usize) -> Vec<usize> {
        let exact = values.len() == columns && values.iter().all(|v| !v.is_empty());
        let rows = if exact {
            self.by_tuple.get(&values.iter().cloned().map(Some).collect::<Keys>())
        } else {
            values.first().and_then(|first| self.by_first.get(first))
        };
        let mut rows: Vec<usize> = rows
            .map(|rows| rows.iter().copied().filter(|&r| self.rows.get(r).is_some_and(|row| row.2)).collect())
            .unwrap_or_default();
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    /// kyaml's ElementSetter match: for each key column up to the number of values, the field is
    /// present and equals the value (an empty value matches any present field).
    fn matching(&self, values: &[String], columns: usize) -> Vec<usize> {
        self.candidates(values, columns)
            .into_iter()
            .filter(|&r| {
                self.rows.get(r).is_some_and(|(_, keys, _)| {
                    values.iter().zip(keys).all(|(v, k)| k.as_ref().is_some_and(|k| v.is_empty() || k == v))
                })
            })
            .collect()
    }

    /// kyaml's ElementSetter with an element: every matching row becomes the element, or it is
    /// appended when none matches.
    fn set_or_push(&mut self, values: &[String], columns: usize, slot: Slot, keys: Keys) {
        let rows = self.matching(values, columns);
        if rows.is_empty() {
            self.push(slot, keys);
        } else {
            for row in rows {
                self.set(row, slot, keys.clone());
            }
        }
    }

    /// kyaml's ElementList lookup: the first row whose fields equal every non-empty value.
    fn first(&self, values: &[String], columns: usize) -> Option<usize> {
        self.candidates(values, columns).into_iter().find(|&r| {
            self.rows.get(r).is_some_and(|(_, keys, _)| {
                values.iter().zip(keys).all(|(v, k)| v.is_empty() || k.as_deref() == Some(v.as_str()))
            })
        })
    }

    fn live(&self) -> impl Iterator<Item = &(Slot, Keys, bool)> {
        self.rows.iter().filter(|row| row.2)
    }
}

/// A list merged by keys, as kyaml's `walkAssociativeSequence` with `Prepend` does (see the
/// module doc). With `self_merge` the original is the patch's list itself (kyaml's walk of a
/// list the original lacks); `dest` is then ignored.
#[allow(clippy::too_many_arguments)]
fn merge_keyed(
    dest: Vec<Value>,
    patch: &[Value],
    self_merge: bool,
    strict: bool,
    field: &Field,
    path: &str,
    depth: usize,
) -> Result<Vec<Value>, Failure> {
    let all_keys = field.keys;
    // Every element a mapping with its first key: kyaml drops every keyed element when one lacks it.
    let qualifies = |v: &Value| {
        v.as_object().is_some_and(|m| all_keys.first().and_then(|k| m.get(*k)).is_some_and(|k| !key_text(k).is_empty()))
    };
    if let Some(bad) = patch.iter().find(|v| !qualifies(v)) {
        return Err(Failure::Error(match bad {
            Value::Object(_) => MergeError::at(
                path,
                format!(
                    "element has no merge key {:?}: {}",
                    all_keys.first().copied().unwrap_or_default(),
                    serde_json::to_string(bad).unwrap_or_default()
                ),
            ),
            _ => MergeError::at(path, format!("elements of this list are objects merged by {all_keys:?}")),
        }));
    }
    let mut dest: Vec<Value> = if self_merge {
        let mut fresh = Vec::with_capacity(patch.len());
        for element in patch {
            fresh.push(fresh_element(element, field, path, depth)?);
        }
        fresh
    } else {
        dest
    };
    if let Some(bad) = dest.iter().find(|v| !qualifies(v)) {
        if !strict {
            return Err(Unqualified(dest));
        }
        return Err(Failure::Error(MergeError::at(
            path,
            format!(
                "the original list has an element without merge key {:?} ({}): fix the resource",
                all_keys.first().copied().unwrap_or_default(),
                serde_json::to_string(bad).unwrap_or_default()
            ),
        )));
    }
    let texts =
        |v: &Value| -> Vec<String> { all_keys.iter().map(|k| v.get(*k).map(key_text).unwrap_or_default()).collect() };
    // elementValues: the patch's tuples, then the original's, each once.
    let mut seen: HashSet<Vec<String>> = HashSet::new();
    let mut tuples: Vec<Vec<String>> = Vec::new();
    for tuple in patch.iter().chain(dest.iter()).map(texts) {
        if seen.insert(tuple.clone()) {
            tuples.push(tuple);
        }
    }
    if all_keys.len() > 1 {
        merge_values(&mut tuples);
    }
    // validateKeys: only the key columns some tuple fills.
    let columns: Vec<usize> =
        (0..all_keys.len()).filter(|&c| tuples.iter().any(|t| t.get(c).is_some_and(|v| !v.is_empty()))).collect();
    let project = |tuple: &[String]| -> Vec<String> {
        columns.iter().map(|&c| tuple.get(c).cloned().unwrap_or_default()).collect()
    };
    let keys_of = |v: &Value| -> Keys {
        columns.iter().map(|&c| all_keys.get(c).and_then(|k| v.get(*k)).map(key_text)).collect()
    };
    let width = columns.len();
    let mut dest_table = Table::new();
    for (i, element) in dest.iter().enumerate() {
        dest_table.push(Slot::Dest(i), keys_of(element));
    }
    let mut patch_table = Table::new();
    for (i, element) in patch.iter().enumerate() {
        patch_table.push(Slot::Patch(i), keys_of(element));
    }
    let mut fresh: Vec<Option<Value>> = vec![None; patch.len()];
    let mut consumed = vec![false; patch.len()];
    let mut merged = Table::new();
    for tuple in &tuples {
        let tuple = project(tuple);
        let element_path = || {
            let shown: Vec<&str> = tuple.iter().map(String::as_str).filter(|v| !v.is_empty()).collect();
            format!("{path}/{}={}", all_keys.first().copied().unwrap_or_default(), shown.join("/"))
        };
        let found_dest = dest_table.first(&tuple, width);
        let found_patch = patch_table.first(&tuple, width);
        let slot = match (found_dest, found_patch) {
            (None, None) => None,
            (Some(d), None) => {
                if let Some(Value::Object(map)) = dest.get_mut(d) {
                    if !self_merge {
                        normalize_map(map, field.schema, depth + 1);
                    }
                }
                Some(Slot::Dest(d))
            }
            (found_dest, Some(p)) => {
                let element = patch.get(p).and_then(Value::as_object);
                // kyaml removes an element's directive from the patch when it reads it, so a
                // second tuple finding the same element merges it.
                let seen_before = consumed.get(p).copied().unwrap_or(true);
                if let Some(flag) = consumed.get_mut(p) {
                    *flag = true;
                }
                match element.and_then(directive).filter(|_| !seen_before) {
                    Some("delete") => None,
                    Some("replace") => Some(Slot::Patch(p)),
                    Some("merge") | None => match (found_dest, element) {
                        (Some(d), Some(element)) => {
                            if !self_merge {
                                // Once an element entered the list on its own, kyaml's patch
                                // node is that merged element.
                                let stripped;
                                let element = if let Some(Some(Value::Object(entered))) = fresh.get(p) {
                                    entered
                                } else if seen_before && element.contains_key(PATCH) {
                                    stripped = without_key(element, PATCH);
                                    &stripped
                                } else {
                                    element
                                };
                                if let Some(Value::Object(target)) = dest.get_mut(d) {
                                    merge_map(target, element, field.schema, &element_path(), depth + 1)?;
                                }
                                if let Some(target) = dest.get(d) {
                                    dest_table.set(d, Slot::Dest(d), keys_of(target));
                                }
                            }
                            Some(Slot::Dest(d))
                        }
                        _ => Some(Slot::Patch(p)),
                    },
                    Some(other) => {
                        let message = format!(
                            "unknown $patch directive {other:?} in a list element (expected delete, replace or merge)"
                        );
                        return Err(Failure::Error(MergeError::at(element_path(), message)));
                    }
                }
            }
        };
        match slot {
            None => {
                for row in dest_table.matching(&tuple, width) {
                    dest_table.remove(row);
                }
            }
            Some(slot) => {
                let keys = match slot {
                    Slot::Dest(d) => dest.get(d).map(keys_of).unwrap_or_default(),
                    Slot::Patch(p) => {
                        if let (Some(element), Some(cache)) = (patch.get(p), fresh.get_mut(p)) {
                            if cache.is_none() {
                                *cache = Some(fresh_element(element, field, &element_path(), depth)?);
                            }
                        }
                        patch.get(p).map(keys_of).unwrap_or_default()
                    }
                };
                merged.set_or_push(&tuple, width, slot, keys);
            }
        }
    }
    // appendListNode: every remaining original element is set again, in original order.
    let remaining: Vec<(Slot, Keys)> = dest_table.live().map(|(slot, keys, _)| (*slot, keys.clone())).collect();
    for (slot, keys) in remaining {
        let present: Vec<String> = keys.iter().flatten().cloned().collect();
        for _ in present.len()..width {
            merged.push(slot, keys.clone());
        }
        if width > 1 {
            for row in merged.matching(&present, width) {
                merged.remove(row);
            }
        }
        merged.set_or_push(&present, width, slot, keys);
    }
    let slots: Vec<Slot> = merged.live().map(|(slot, _, _)| *slot).collect();
    let mut uses: HashMap<Slot, usize> = HashMap::new();
    for slot in &slots {
        *uses.entry(*slot).or_default() += 1;
    }
    let mut dest: Vec<Option<Value>> = dest.into_iter().map(Some).collect();
    let mut list = Vec::with_capacity(slots.len());
    for slot in slots {
        let left = uses.entry(slot).or_default();
        *left = left.saturating_sub(1);
        let source = match slot {
            Slot::Dest(d) => dest.get_mut(d),
            Slot::Patch(p) => fresh.get_mut(p),
        };
        let value = match source {
            Some(value) if *left == 0 => value.take(),
            Some(value) => value.clone(),
            None => None,
        };
        list.extend(value);
    }
    Ok(list)
}

/// A patch element as it enters the list on its own: merged with itself (nulls and directives
/// go, its own merge lists are merged by kyaml's rules).
fn fresh_element(element: &Value, field: &Field, path: &str, depth: usize) -> Result<Value, MergeError> {
    let Value::Object(map) = element else { return Ok(element.clone()) };
    let mut fresh = Map::new();
    if directive(map) == Some("delete") {
        merge_map(&mut fresh, &without_key(map, PATCH), field.schema, path, depth + 1)?;
    } else {
        merge_map(&mut fresh, map, field.schema, path, depth + 1)?;
    }
    Ok(Value::Object(fresh))
}

fn without_key(map: &Map, key: &str) -> Map {
    map.iter().filter(|(k, _)| k.as_str() != key).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// kyaml's `mergeValues`: two tuples match when they agree wherever both have a value and share
/// one; both become their union. Tuples here always have their first key, so only tuples with
/// the same first key can match, and a complete tuple never changes. Pairs are visited in
/// kyaml's order (each tuple against every other, with the values as they are at that point),
/// within groups of the same first key and only where a tuple misses a value, so the work is
/// linear unless many incomplete tuples share a first key.
fn merge_values(tuples: &mut [Vec<String>]) {
    let first = |tuple: &[String]| tuple.first().cloned().unwrap_or_default();
    let mut wanted: Vec<String> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for tuple in tuples.iter().filter(|t| t.iter().any(String::is_empty)) {
        if taken.insert(first(tuple)) {
            wanted.push(first(tuple));
        }
    }
    if wanted.is_empty() {
        return;
    }
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, tuple) in tuples.iter().enumerate() {
        if taken.contains(&first(tuple)) {
            groups.entry(first(tuple)).or_default().push(i);
        }
    }
    for members in wanted.iter().filter_map(|w| groups.get(w)) {
        let open: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| tuples.get(i).is_some_and(|t| t.iter().any(String::is_empty)))
            .collect();
        for &i in members {
            let Some(current) = tuples.get(i).cloned() else { continue };
            let others = if current.iter().all(|v| !v.is_empty()) { &open } else { members };
            let mut last = None;
            for &j in others {
                if j == i {
                    continue;
                }
                if let Some(union) = tuples.get(j).and_then(|other| tuple_match(&current, other)) {
                    if let Some(slot) = tuples.get_mut(j) {
                        *slot = union.clone();
                    }
                    last = Some(union);
                }
            }
            if let (Some(union), Some(slot)) = (last, tuples.get_mut(i)) {
                *slot = union;
            }
        }
    }
}

/// kyaml's `match`: same length, equal or one empty at every position, equal at one at least.
fn tuple_match(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut union = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            union.push(x.clone());
        } else if x.is_empty() {
            union.push(y.clone());
        } else if y.is_empty() {
            union.push(x.clone());
        } else {
            return None;
        }
    }
    common.then_some(union)
}

/// `$setElementOrder`: elements named in `order` come first in that order; the rest keep their
/// relative order after them.
fn reorder(list: &mut Vec<Value>, order: &[Value], merge_key: Option<&str>) {
    // The first position of each key in `order`, so ranking stays linear (20 000 containers).
    let identity = |value: &Value| match merge_key {
        Some(key) => value.get(key).map(key_of),
        None => Some(key_of(value)),
    };
    let mut positions: HashMap<String, usize> = HashMap::new();
    for (i, o) in order.iter().enumerate() {
        if let Some(key) = identity(o) {
            positions.entry(key).or_insert(i);
        }
    }
    let rank = |item: &Value| identity(item).and_then(|key| positions.get(&key).copied());
    let mut ranked: Vec<(usize, usize, Value)> =
        std::mem::take(list).into_iter().enumerate().map(|(i, v)| (rank(&v).unwrap_or(usize::MAX), i, v)).collect();
    ranked.sort_by_key(|(r, i, _)| (*r, *i));
    *list = ranked.into_iter().map(|(_, _, v)| v).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(original: Value, patch: Value, api_version: &str, kind: &str) -> Result<Value, String> {
        let (Value::Object(mut original), Value::Object(patch)) = (original, patch) else { return Err("maps".into()) };
        apply(&mut original, &patch, schema_of(api_version, kind)).map_err(|err| err.to_string())?;
        Ok(Value::Object(original))
    }

    fn deployment(containers: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    }

    fn service(ports: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dns"}, "spec": {"ports": ports}})
    }

    fn service_ports(original: Value, patch: Value) -> Value {
        smp(service(original), service(patch), "v1", "Service").unwrap_or_default()["spec"]["ports"].clone()
    }

    /// kyaml with Prepend: the patch's elements first, in patch order, then the original's others.
    #[test]
    fn containers_merge_by_name_patch_first() {
        let original = deployment(json!([{"name": "app", "image": "a:1", "env": [{"name": "A", "value": "1"}]},
                                         {"name": "side", "image": "s:1"}]));
        let patch = deployment(json!([{"name": "new", "image": "n:1"},
                                      {"name": "app", "image": "a:2", "env": [{"name": "B", "value": "2"}]}]));
        let result = smp(original, patch, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(
            result["spec"]["template"]["spec"]["containers"],
            json!([{"name": "new", "image": "n:1"},
                   {"name": "app", "image": "a:2", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]},
                   {"name": "side", "image": "s:1"}])
        );
    }

    #[test]
    fn directives() {
        let original = deployment(json!([{"name": "app", "image": "a:1"}, {"name": "side", "image": "s:1"}]));
        let delete = deployment(json!([{"name": "side", "$patch": "delete"}]));
        let result = smp(original.clone(), delete, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"], json!([{"name": "app", "image": "a:1"}]));
        let replace = deployment(json!([{"$patch": "replace"}, {"name": "only", "image": "o:1"}]));
        let result = smp(original.clone(), replace, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"], json!([{"name": "only", "image": "o:1"}]));
        // kyaml puts the original element back over an element's own `$patch: replace`.
        let element_replace = deployment(json!([{"name": "app", "$patch": "replace", "args": ["x"]}]));
        let result = smp(original.clone(), element_replace, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(
            result["spec"]["template"]["spec"]["containers"],
            original["spec"]["template"]["spec"]["containers"]
        );
        let merge = deployment(json!([{"name": "new"}, {"$patch": "merge"}]));
        let result = smp(original.clone(), merge, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"][0], json!({"name": "new"}));
        let drop = deployment(json!([{"name": "x"}, {"$patch": "delete"}]));
        let result = smp(original.clone(), drop, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"], json!({}));
        let order = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "app"}]}}}});
        let result = smp(original, order, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"][0]["name"], json!("side"));
    }

    #[test]
    fn unknown_kinds_are_merge_patches() {
        let original = json!({"spec": {"list": [1, 2], "keep": true, "drop": 1}});
        let patch = json!({"spec": {"list": [3], "drop": null}});
        assert_eq!(smp(original, patch, "example.com/v1", "Widget"), Ok(json!({"spec": {"list": [3], "keep": true}})));
    }

    #[test]
    fn primitive_merge_lists_are_sets_patch_first() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let patch = json!({"metadata": {"finalizers": ["c", "a"]}});
        let result = smp(original.clone(), patch, "v1", "ConfigMap").unwrap_or_default();
        assert_eq!(result["metadata"]["finalizers"], json!(["c", "a", "b"]));
        let patch = json!({"metadata": {"finalizers": ["b", "c"], "$deleteFromPrimitiveList/finalizers": ["a"]}});
        let result = smp(original, patch, "v1", "ConfigMap").unwrap_or_default();
        assert_eq!(result["metadata"]["finalizers"], json!(["b", "c"]));
    }

    /// The orders observed with kustomize 5.8.1 (issue 15).
    #[test]
    fn service_ports_follow_kyaml() {
        let tcp53 = json!({"port": 53, "protocol": "TCP"});
        assert_eq!(
            service_ports(
                json!([tcp53, {"port": 80, "protocol": "TCP"}]),
                json!([{"port": 53, "protocol": "UDP"}, {"port": 80, "protocol": "TCP", "targetPort": 8080}])
            ),
            json!([{"port": 53, "protocol": "UDP"}, tcp53, {"port": 80, "protocol": "TCP", "targetPort": 8080}])
        );
        assert_eq!(
            service_ports(json!([tcp53, {"port": 80}]), json!([{"port": 80, "targetPort": 8080}])),
            json!([tcp53, {"port": 80, "targetPort": 8080}])
        );
        assert_eq!(
            service_ports(json!([{"port": 53}, {"port": 80}]), json!([{"port": 80, "protocol": "UDP"}])),
            json!([{"port": 53}, {"port": 80}])
        );
    }

    /// Container ports merge on containerPort and protocol: 8080/UDP is a new port beside 8080/TCP.
    #[test]
    fn container_ports_use_list_map_keys() {
        let original = deployment(json!([{"name": "a", "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]));
        let patch = deployment(json!([{"name": "a", "ports": [{"containerPort": 8080, "protocol": "UDP"}]}]));
        let result = smp(original, patch, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(
            result["spec"]["template"]["spec"]["containers"][0]["ports"],
            json!([{"containerPort": 8080, "protocol": "UDP"}, {"containerPort": 8080, "protocol": "TCP"}])
        );
    }

    /// kyaml re-merges lists the patch does not name: `[53/UDP, 53]` becomes `[53]`.
    #[test]
    fn untouched_merge_lists_are_walked_too() {
        let original = deployment(
            json!([{"name": "a", "ports": [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53}]},
                                         {"name": "b"}]),
        );
        let patch = deployment(json!([{"name": "b", "image": "b:2"}]));
        let result = smp(original, patch, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(
            result["spec"]["template"]["spec"]["containers"],
            json!([{"name": "b", "image": "b:2"}, {"name": "a", "ports": [{"containerPort": 53}]}])
        );
    }

    /// A touched merge list whose element lacks its key is refused (kyaml would drop every keyed
    /// element); an untouched one is left alone.
    #[test]
    fn elements_without_merge_keys() {
        let original = deployment(json!([{"image": "nameless"}, {"name": "a"}]));
        let patch = deployment(json!([{"name": "b"}]));
        let result = smp(original.clone(), patch, "apps/v1", "Deployment");
        assert!(result.is_err_and(|e| e.contains("without merge key \"name\"")));
        let patch = json!({"spec": {"replicas": 2}});
        let result = smp(original.clone(), patch, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"], original["spec"]["template"]);
        let patch = deployment(json!([{"image": "x"}]));
        assert!(smp(original, patch, "apps/v1", "Deployment").is_err_and(|e| e.contains("no merge key")));
    }

    /// Attack "strategic-merge-deep-nesting": a patch deeper than MAX_DEPTH is refused, not recursed.
    #[test]
    fn deep_patches_are_refused() {
        let mut patch = json!("x");
        for _ in 0..MAX_DEPTH + 5 {
            patch = json!({"a": patch});
        }
        let result = smp(json!({}), patch, "example.com/v1", "Widget");
        assert!(result.is_err_and(|e| e.contains("nests deeper than 256 levels")));
    }

    /// Attack "strategic-set-element-order-20000": ranking and merging by key are linear.
    #[test]
    fn set_element_order_over_many_containers() {
        let n = 20_000;
        let containers: Vec<Value> = (0..n).map(|i| json!({"name": format!("c{i}"), "image": "x"})).collect();
        let order: Vec<Value> = (0..n).rev().map(|i| json!({"name": format!("c{i}")})).collect();
        let patch = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": order, "containers": [{"name": "c0", "image": "y"}]}}}});
        let result = smp(deployment(json!(containers)), patch, "apps/v1", "Deployment").unwrap_or_default();
        let merged = &result["spec"]["template"]["spec"]["containers"];
        assert_eq!(merged[0], json!({"name": format!("c{}", n - 1), "image": "x"}));
        assert_eq!(merged[n - 1], json!({"name": "c0", "image": "y"}));
    }

    /// 20 000 ports without protocol patched by 20 000 with one: the multi-key rules stay linear.
    #[test]
    fn many_ports_without_protocol() {
        let n = 20_000;
        let original: Vec<Value> = (0..n).map(|i| json!({"port": i})).collect();
        let patch: Vec<Value> =
            (0..n).rev().map(|i| json!({"port": i, "protocol": "UDP", "name": format!("p{i}")})).collect();
        let merged = service_ports(json!(original), json!(patch));
        assert_eq!(merged.as_array().map(Vec::len), Some(n));
        assert_eq!(merged[0], json!({"port": 0}));
    }

    // A literal, quadratic port of kyaml's walkAssociativeSequence with Prepend (elementValues,
    // mergeValues, validateKeys, elementValueList, ElementSetter, appendListNode), over elements
    // with scalar fields only, to check the linear version against on random lists.
    struct Kyaml {
        nodes: Vec<Map>,
    }

    impl Kyaml {
        fn text(&self, node: usize, key: &str) -> Option<String> {
            self.nodes[node].get(key).map(key_text)
        }

        fn field_matcher(&self, node: usize, key: &str, value: &str) -> bool {
            match self.text(node, key) {
                Some(text) => value.is_empty() || text == value,
                None => false,
            }
        }

        fn element_setter(&self, list: &mut Vec<usize>, element: Option<usize>, keys: &[String], values: &[String]) {
            let mut content = Vec::new();
            let mut found_any = false;
            for &e in list.iter() {
                if self.nodes[e].is_empty() {
                    continue;
                }
                let mut val = false;
                let mut found = true;
                for j in 0..keys.len() {
                    if j < values.len() {
                        val = self.field_matcher(e, &keys[j], &values[j]);
                    }
                    if !val {
                        found = false;
                        break;
                    }
                }
                if !found {
                    if !values.is_empty() {
                        content.push(e);
                    }
                    continue;
                }
                found_any = true;
                if let Some(x) = element {
                    content.push(x);
                }
            }
            *list = content;
            if let Some(x) = element {
                if !found_any {
                    list.push(x);
                }
            }
        }

        fn validate_keys(
            values_list: &[Vec<String>],
            values: &[String],
            keys: &[String],
        ) -> (Vec<String>, Vec<String>) {
            let valid: HashSet<&String> = values_list
                .iter()
                .flat_map(|v| v.iter().enumerate().filter(|(_, v)| !v.is_empty()).map(|(i, _)| &keys[i]))
                .collect();
            if valid.is_empty() {
                return (keys.to_vec(), values.to_vec());
            }
            let vk = keys.iter().filter(|k| valid.contains(k)).cloned().collect();
            let vv = values
                .iter()
                .enumerate()
                .filter(|(i, v)| !v.is_empty() || valid.contains(&keys[*i]))
                .map(|(_, v)| v.clone())
                .collect();
            (vk, vv)
        }

        fn element_list(&self, list: &[usize], keys: &[String], values: &[String]) -> Option<usize> {
            list.iter()
                .copied()
                .find(|&e| keys.iter().zip(values).all(|(k, v)| self.text(e, k).as_deref() == Some(v.as_str())))
        }

        /// Shallow merge of scalar fields: null deletes, `$patch` is skipped.
        fn merge(&mut self, into: usize, from: usize) {
            let patch = self.nodes[from].clone();
            for (k, v) in patch {
                if k == PATCH {
                    continue;
                }
                if v.is_null() {
                    self.nodes[into].shift_remove(&k);
                } else {
                    self.nodes[into].insert(k, v);
                }
            }
        }

        /// `dest: None` is a list the original lacks: kyaml merges the patch's list with itself.
        /// A node walked against itself: its nulls go.
        fn merge_itself(&mut self, node: usize) {
            self.nodes[node].retain(|_, v| !v.is_null());
        }

        fn run(dest: Option<&[Value]>, patch: &[Value], keys: &[&str]) -> Vec<Value> {
            let mut k = Kyaml { nodes: Vec::new() };
            let mut dest_list: Vec<usize> = Vec::new();
            let mut patch_list: Vec<usize> = Vec::new();
            for v in dest.unwrap_or_default() {
                dest_list.push(k.nodes.len());
                k.nodes.push(v.as_object().cloned().unwrap_or_default());
            }
            for v in patch {
                patch_list.push(k.nodes.len());
                k.nodes.push(v.as_object().cloned().unwrap_or_default());
            }
            if dest.is_none() {
                dest_list = patch_list.clone();
            }
            let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            let mut values_list: Vec<Vec<String>> = Vec::new();
            for &e in patch_list.iter().chain(&dest_list) {
                let tuple: Vec<String> = keys.iter().map(|key| k.text(e, key).unwrap_or_default()).collect();
                if !values_list.contains(&tuple) {
                    values_list.push(tuple);
                }
            }
            if keys.len() > 1 {
                for i in 0..values_list.len() {
                    let v1 = values_list[i].clone();
                    for j in 0..values_list.len() {
                        if let Some(r) = tuple_match(&v1, &values_list[j]) {
                            values_list[i] = r.clone();
                            values_list[j] = r;
                        }
                    }
                }
            }
            let mut items: Vec<usize> = Vec::new();
            let mut valid_keys = Vec::new();
            for values in values_list.clone() {
                let (vk, vv) = Self::validate_keys(&values_list, &values, &keys);
                valid_keys = vk.clone();
                let (k2, v2) = Self::validate_keys(std::slice::from_ref(&vv), &vv, &vk);
                let d = k.element_list(&dest_list, &k2, &v2);
                let p = k.element_list(&patch_list, &k2, &v2);
                // Read and removed, as determineSmpDirective does.
                let directive = p.and_then(|p| k.nodes[p].shift_remove(PATCH)).map(|v| key_text(&v));
                let val = match (d, p, directive.as_deref()) {
                    (_, Some(_), Some("delete")) => None,
                    (_, Some(p), Some("replace")) | (None, Some(p), _) => {
                        k.merge_itself(p);
                        Some(p)
                    }
                    (Some(d), Some(p), _) => {
                        if d == p {
                            k.merge_itself(p);
                        } else {
                            k.merge(d, p);
                        }
                        Some(d)
                    }
                    (Some(d), None, _) => Some(d),
                    (None, None, _) => None,
                };
                match val {
                    None => k.element_setter(&mut dest_list, None, &vk, &vv),
                    Some(x) => k.element_setter(&mut items, Some(x), &vk, &vv),
                }
            }
            if !values_list.is_empty() {
                for &e in &dest_list.clone() {
                    let mut v = Vec::new();
                    for key in &valid_keys {
                        match k.text(e, key) {
                            None => items.push(e),
                            Some(t) => v.push(t),
                        }
                    }
                    if valid_keys.len() > 1 {
                        k.element_setter(&mut items, None, &valid_keys, &v);
                    }
                    k.element_setter(&mut items, Some(e), &valid_keys, &v);
                }
            } else {
                items = dest_list;
            }
            items.into_iter().map(|e| Value::Object(k.nodes[e].clone())).collect()
        }
    }

    /// xorshift, so the random lists are the same on every run.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn random_list(r: &mut Random, keys: &[&str], patch: bool) -> Vec<Value> {
        (0..r.below(5))
            .map(|_| {
                let mut m = Map::new();
                m.insert(keys[0].into(), json!(1 + r.below(3)));
                if keys.len() > 1 {
                    match r.below(3) {
                        0 => {}
                        1 => {
                            m.insert(keys[1].into(), json!("TCP"));
                        }
                        _ => {
                            m.insert(keys[1].into(), json!("UDP"));
                        }
                    }
                }
                match r.below(4) {
                    0 => {}
                    1 if patch => {
                        m.insert("v".into(), Value::Null);
                    }
                    _ => {
                        m.insert("v".into(), json!(r.below(100)));
                    }
                }
                if patch {
                    match r.below(8) {
                        0 => {
                            m.insert(PATCH.into(), json!("delete"));
                        }
                        1 => {
                            m.insert(PATCH.into(), json!("replace"));
                        }
                        _ => {}
                    }
                }
                Value::Object(m)
            })
            .collect()
    }

    #[test]
    fn keyed_merge_matches_a_literal_port_of_kyaml() {
        let mut r = Random(0x2545_f491_4f6c_dd1d);
        for keys in [&["port", "protocol"][..], &["name"][..]] {
            let field = Field { name: "ports", schema: None, list: true, keys, merge: true, retain_keys: false };
            for round in 0..10_000 {
                let dest = random_list(&mut r, keys, false);
                let patch = random_list(&mut r, keys, true);
                let expected = Kyaml::run(Some(&dest), &patch, keys);
                let actual = merge_list(Some(dest.clone()), &patch, &field, "/ports", 0);
                assert_eq!(
                    actual,
                    Ok(Some(expected)),
                    "round {round}: {}\n+ {}",
                    Value::Array(dest),
                    Value::Array(patch.clone())
                );
                let expected = Kyaml::run(None, &patch, keys);
                // An element kyaml never looks up keeps its raw `$patch` and nulls there; ours
                // are cleaned (documented in the module doc).
                let raw =
                    |v: &Value| v.as_object().is_some_and(|m| m.contains_key(PATCH) || m.values().any(Value::is_null));
                if expected.iter().any(raw) {
                    continue;
                }
                let actual = merge_list(None, &patch, &field, "/ports", 0);
                assert_eq!(actual, Ok(Some(expected)), "round {round}, no original: {}", Value::Array(patch));
            }
        }
    }
}
