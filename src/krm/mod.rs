//! The KRM wire contract (the kpt/kustomize function specification): reading and writing
//! `ResourceList`s, the annotations kpt and kustomize use to track files, and the identity of a
//! resource.
//!
//! This module knows what a ResourceList looks like; it does not know what the function does
//! with the items.

pub mod annotations;
mod block;
mod cut;
#[cfg(test)]
pub(crate) mod differential;
mod documents;
mod head;
pub use head::{LOCAL_CONFIG_BIT, UNNAMED_BIT};
mod item;
mod rules;
mod scan;
mod splice;
mod stream;
mod threads;
mod walk;

pub use cut::{document_marker, standalone_source};
pub use documents::StreamItems;
pub use head::type_of;
pub use item::{Item, Quoted, QuotedScalars};
pub use stream::shape_of;
pub use threads::on_two_threads;
#[cfg(test)]
pub(crate) use threads::ONE_THREAD;

use crate::diag::{Diagnostic, Location, Origin, ResourceRef};
use crate::doc::{oversized_message, oversized_string, read_yaml_documents_as, to_yaml, Map, Value, MAX_STRING_BYTES};

use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use stream::{Items, Top};

pub use annotations::{annotation, is_local_config, item_location, remove_annotation, set_annotation};

const RESOURCE_LIST_VERSIONS: [&str; 3] =
    ["config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1"];

/// How the input was written; the output is written the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

/// Input the function cannot work with at all (exit 2, one line on stderr).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusableInput {
    pub message: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
}

impl UnusableInput {
    fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), line: None, column: None }
    }
}

impl fmt::Display for UnusableInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "line {line} column {column}: {}", self.message)
            }
            _ => f.write_str(&self.message),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResourceList {
    /// Echoed back unchanged.
    pub api_version: String,
    /// `ResourceList` or `List`, echoed back unchanged.
    pub kind: String,
    pub items: Vec<Item>,
    pub function_config: Option<Value>,
    pub format: Format,
}

impl ResourceList {
    /// Parses stdin with the default longest-string limit.
    pub fn parse(bytes: &[u8]) -> Result<Self, UnusableInput> {
        Self::parse_with_limit(bytes, MAX_STRING_BYTES as u64)
    }

    /// Parses stdin. Anything that is not one ResourceList (or `kind: List`) of mappings is
    /// unusable, and so is a string longer than `max_string` (`--max-file-size`).
    pub fn parse_with_limit(bytes: &[u8], max_string: u64) -> Result<Self, UnusableInput> {
        Self::parse_text(utf8(bytes)?, None, max_string)
    }

    /// [`ResourceList::parse_with_limit`] of text the items may share: an item no step changes
    /// is written back from it, not from a copy of its own.
    pub fn parse_shared(input: &Arc<String>, max_string: u64) -> Result<Self, UnusableInput> {
        Self::parse_text(input, Some(input), max_string)
    }

    fn parse_text(text: &str, shared: Option<&Arc<String>>, max_string: u64) -> Result<Self, UnusableInput> {
        let (top, format) = parse_document(text, shared)?;
        let parts = match top {
            Top::List(parts) => *parts,
            Top::NotMapping(shape) => {
                return Err(UnusableInput::new(format!(
                    "input is not a ResourceList: it is {shape}, expected a mapping with kind: ResourceList and items"
                )))
            }
            Top::Empty => return Err(UnusableInput::new("input is empty: expected a ResourceList")),
        };
        let text_of = |v: Option<Value>| v.as_ref().and_then(Value::as_str).unwrap_or_default().to_string();
        let kind = text_of(parts.kind);
        let api_version = text_of(parts.api_version);
        match kind.as_str() {
            "ResourceList" if RESOURCE_LIST_VERSIONS.contains(&api_version.as_str()) => {}
            "ResourceList" => {
                return Err(UnusableInput::new(format!(
                    "unsupported ResourceList apiVersion {api_version:?}: use config.kubernetes.io/v1"
                )))
            }
            "List" => {}
            "" => {
                return Err(UnusableInput::new(
                    "input is not a ResourceList: it has no kind (expected kind: ResourceList)",
                ))
            }
            other => {
                return Err(UnusableInput::new(format!(
                    "input is not a ResourceList: got kind {other:?} (expected kind: ResourceList with items; \
                     use `render-blueprint render` for plain manifests)"
                )))
            }
        }
        let items = match parts.items {
            // A ResourceList may come without items (a generator's input); a List is nothing else.
            Items::None if kind == "List" => {
                return Err(UnusableInput::new(
                    "input is a kind: List without items: put the objects under items (items: [] for none)",
                ))
            }
            Items::None => Vec::new(),
            Items::List(_, Some((i, shape))) => {
                return Err(UnusableInput::new(format!(
                    "{kind} items[{i}] is {shape}, not a mapping: each item is a Kubernetes object \
                     with apiVersion, kind and metadata"
                )));
            }
            Items::List(mut items, None) => {
                if format == Format::Yaml && !parts.sources_attached {
                    attach_sources(text, &mut items, &parts.item_starts, parts.after_items);
                }
                give_quoted(text, format, &mut items);
                // Only an item whose whole text is longer than the limit can hold such a string.
                for (i, item) in items.iter().enumerate().filter(|(_, item)| item.text_len() as u64 > max_string) {
                    if let Some((field, len)) = item.with_value(|value| oversized_string(value, max_string)) {
                        return Err(UnusableInput::new(oversized_message(
                            &format!("ResourceList items[{i}]"),
                            &field,
                            len,
                            max_string,
                        )));
                    }
                }
                items
            }
            Items::NotList(shape) => {
                return Err(UnusableInput::new(format!(
                    "{kind} items is {shape}: it must be a list of Kubernetes objects"
                )))
            }
        };
        let function_config = match parts.function_config {
            None | Some(Value::Null) => None,
            Some(config @ Value::Object(_)) => Some(config),
            Some(_) => return Err(UnusableInput::new("ResourceList functionConfig must be a mapping")),
        };
        Ok(Self { api_version, kind, items, function_config, format })
    }

    /// Writes the list to `out` item by item (YAML) so that the whole text never sits in memory;
    /// the bytes equal [`ResourceList::write`]'s.
    pub fn write_to(&self, out: &mut dyn std::io::Write, items: Vec<Item>, results: Vec<Value>) -> std::io::Result<()> {
        if self.format == Format::Json || items.is_empty() {
            let items = items.into_iter().map(Item::into_value).collect();
            return out.write_all(self.write(items, results).as_bytes());
        }
        let mut head = Map::new();
        head.insert("apiVersion".into(), json!(self.api_version));
        head.insert("kind".into(), json!(self.kind));
        out.write_all(to_yaml(&Value::Object(head)).as_bytes())?;
        out.write_all(b"items:\n")?;
        let two_cores = threads::two_cores();
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let mut batch: Vec<Item> = items.by_ref().take(WRITE_BATCH).collect();
            if !two_cores || batch.len() < 2 || !batch.iter().any(Item::is_touched) {
                for item in batch {
                    write_item(out, item)?;
                }
                continue;
            }
            // Items a step changed are written from their values, which costs parses: the
            // batch's second half is written on another thread into a buffer.
            let second = batch.split_off(batch.len() / 2);
            let (first, second) = std::thread::scope(|scope| {
                let second = threads::spawn(scope, || write_items(second));
                let first = write_items(batch);
                (first, second.map(|second| second.join()))
            });
            out.write_all(&first?)?;
            match second {
                Ok(Ok(second)) => out.write_all(&second?)?,
                _ => return Err(std::io::Error::other("writing items failed")),
            }
        }
        if !results.is_empty() {
            out.write_all(b"results:\n")?;
            for result in &results {
                write_list_element(out, &to_yaml(result), 0)?;
            }
        }
        Ok(())
    }

    /// Writes the list with its items and results (omitted when empty); never the functionConfig.
    pub fn write(&self, items: Vec<Value>, results: Vec<Value>) -> String {
        let mut out = Map::new();
        out.insert("apiVersion".into(), json!(self.api_version));
        out.insert("kind".into(), json!(self.kind));
        out.insert("items".into(), Value::Array(items));
        if !results.is_empty() {
            out.insert("results".into(), Value::Array(results));
        }
        let out = Value::Object(out);
        match self.format {
            Format::Yaml => to_yaml(&out),
            Format::Json => {
                let mut text = serde_json::to_string_pretty(&out).unwrap_or_default();
                text.push('\n');
                text
            }
        }
    }
}

/// Items are written in batches of this many (see [`ResourceList::write_to`]).
const WRITE_BATCH: usize = 256;

/// One item as an element of the `items` list: its source when no step changed it.
fn write_item(out: &mut dyn std::io::Write, mut item: Item) -> std::io::Result<()> {
    if let Some((source, indent)) = item.unchanged_source() {
        return write_list_element(out, source, indent);
    }
    let quoted = item.take_keep_quoted();
    let text = item.changed_yaml(quoted.as_deref());
    write_list_element(out, &text, 0)
}

fn write_items(items: Vec<Item>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for item in items {
        write_item(&mut out, item)?;
    }
    Ok(out)
}

/// Says which scalars were quoted for the items that keep no source to answer from (see
/// [`QuotedScalars`]): all of a JSON list's; for YAML, what one walk of the whole list finds,
/// made only when some item's source could not be cut out.
fn give_quoted(text: &str, format: Format, items: &mut [Item]) {
    if format == Format::Json {
        items.iter_mut().for_each(|item| item.set_quoted(Quoted::All));
        return;
    }
    if items.iter().all(Item::has_source) {
        return;
    }
    let mut by_item: HashMap<usize, HashSet<String>> = HashMap::new();
    for pointer in crate::doc::quoted_template_scalars(text).into_iter().next().unwrap_or_default() {
        let Some(rest) = pointer.strip_prefix("/items/") else { continue };
        let (index, within) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if let Ok(index) = index.parse::<usize>() {
            by_item.entry(index).or_default().insert(within.to_string());
        }
    }
    for (index, pointers) in by_item {
        if let Some(item) = items.get_mut(index).filter(|item| !item.has_source()) {
            item.set_quoted(Quoted::At(pointers));
        }
    }
}

/// Gives each item of a block `items` list its source text, from its first character to the
/// next item's dash (or the next key, or the end of the document), moved to column 0. An item
/// whose text cannot be cut out safely keeps none and is written from its value: one in a flow
/// list, one using anchors or aliases, one with a `!` under a `%TAG` directive (it may use the
/// directive's tag handle, and its text would not stand alone), one whose lines are less
/// indented than its first, one with a carriage return alone.
fn attach_sources(text: &str, items: &mut [Item], starts: &[crate::doc::Start], after_items: Option<usize>) {
    if starts.len() != items.len() {
        return;
    }
    let tag_handles = crate::doc::declares_tag_handles(text);
    for i in 0..items.len() {
        let Some((start, column)) = starts[i] else { continue };
        let end = match starts.get(i + 1) {
            Some(Some((next, _))) => *next,
            Some(None) => continue,
            None => after_items.unwrap_or(text.len()),
        };
        if tag_handles && text.get(start..end).is_none_or(|item| item.contains('!')) {
            continue;
        }
        if let Some(source) = cut::item_source(text, start, end, column, i + 1 == items.len()) {
            items[i].set_source(source.into_boxed_str());
        }
    }
}

/// One element of a block sequence at column 0, as the YAML writer lays it out: `- ` before the
/// first line, two spaces before the others. `text`'s lines after the first are first moved
/// `indent` columns left (see [`moved_left`]); the element is written with one call.
fn write_list_element(out: &mut dyn std::io::Write, text: &str, indent: usize) -> std::io::Result<()> {
    // Already at the element's column (the usual `- ` at column 0): the text as it is.
    if indent == 2
        && !text.contains('\r')
        && text.match_indices('\n').all(|(at, _)| {
            let next = &text.as_bytes()[at + 1..];
            // A line of only the two spaces would lose them below.
            next.is_empty()
                || next.starts_with(b"\n")
                || (next.starts_with(b"  ") && !matches!(next.get(2), None | Some(b'\n')))
        })
    {
        out.write_all(dash(text))?;
        out.write_all(text.as_bytes())?;
        return if text.ends_with('\n') { Ok(()) } else { out.write_all(b"\n") };
    }
    let mut element = Vec::with_capacity(text.len() + text.len() / 16 + 4);
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            element.extend_from_slice(dash(text));
        } else {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            let line = &line[spaces.min(indent)..];
            if !line.is_empty() {
                element.extend_from_slice(b"  ");
            }
            element.extend_from_slice(line.as_bytes());
            element.push(b'\n');
            continue;
        }
        element.extend_from_slice(line.as_bytes());
        element.push(b'\n');
    }
    out.write_all(&element)
}

/// The dash before an element's first line: without a space when that line is empty (an
/// element read from `-` alone on its line, see [`element_start`]).
fn dash(text: &str) -> &'static [u8] {
    if text.starts_with('\n') {
        b"-"
    } else {
        b"- "
    }
}

/// The input as text, or why it is not.
pub fn utf8(bytes: &[u8]) -> Result<&str, UnusableInput> {
    std::str::from_utf8(bytes).map_err(|err| {
        UnusableInput::new(format!("input is not UTF-8 text (invalid byte at offset {})", err.valid_up_to()))
    })
}

#[cfg(test)]
thread_local! {
    /// Tests set it to read YAML with the full reader only, the reference of the fast one.
    static FULL_READER_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread reads YAML lists with the full reader only (tests; never otherwise).
fn full_reader_only() -> bool {
    #[cfg(test)]
    return FULL_READER_ONLY.with(std::cell::Cell::get);
    #[cfg(not(test))]
    false
}

/// JSON is read by serde_json (faster and exact); everything else as YAML.
fn parse_document(text: &str, shared: Option<&Arc<String>>) -> Result<(Top, Format), UnusableInput> {
    if text.trim_start().starts_with('{') {
        // The YAML reader's depth limit, checked before the recursive reader runs (its own limit
        // of 128 is off, so JSON and YAML input may nest equally deep).
        let position = |offset: usize| {
            let before = &text[..offset];
            let line = before.matches('\n').count() as u64 + 1;
            let column = before.rfind('\n').map_or(before.len(), |at| before.len() - at - 1) as u64 + 1;
            (line, column)
        };
        if let Some((offset, literal)) = crate::doc::oversized_json_integer(text) {
            let (line, column) = position(offset);
            let message = crate::doc::oversized_integer_message(&literal);
            return Err(UnusableInput { message, line: Some(line), column: Some(column) });
        }
        if let Some(offset) = crate::doc::json_too_deep(text, crate::limits::MAX_DEPTH) {
            let (line, column) = position(offset);
            return Err(UnusableInput {
                message: format!(
                    "input is not valid JSON: nesting deeper than {} levels: Kubernetes objects nest far less; look \
                     for unclosed brackets",
                    crate::limits::MAX_DEPTH
                ),
                line: Some(line),
                column: Some(column),
            });
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        deserializer.disable_recursion_limit();
        let parsed =
            serde::Deserialize::deserialize(&mut deserializer).and_then(|top| deserializer.end().map(|()| top));
        return parsed.map(|v| (v, Format::Json)).map_err(|err| {
            // The position is reported separately; drop serde_json's own " at line L column C".
            let text = err.to_string();
            let message = text.rfind(" at line ").map_or(text.as_str(), |at| &text[..at]);
            let message = if err.is_eof() {
                format!("input is not valid JSON: it ends in the middle of a value ({message}); is it truncated?")
            } else {
                format!("input is not valid JSON: {message}")
            };
            UnusableInput { message, line: Some(err.line() as u64), column: Some(err.column() as u64) }
        });
    }
    if !full_reader_only() {
        if let Some(parts) = scan::scan(text, shared) {
            return Ok((Top::List(Box::new(parts)), Format::Yaml));
        }
    }
    let documents: Vec<Top> = read_yaml_documents_as(text).map_err(|err| UnusableInput {
        // Valid YAML the value model cannot hold says so itself.
        message: if err.unrepresentable { err.message } else { format!("input is not valid YAML: {}", err.message) },
        line: err.line,
        column: err.column,
    })?;
    let mut documents: Vec<Top> = documents.into_iter().filter(|d| !matches!(d, Top::Empty)).collect();
    match documents.len() {
        0 => Err(UnusableInput::new("input is empty: expected a ResourceList")),
        1 => Ok((documents.remove(0), Format::Yaml)),
        n => Err(UnusableInput::new(format!(
            "input has {n} YAML documents: expected a single ResourceList \
             (use `render-blueprint render` for a stream of manifests)"
        ))),
    }
}

/// The identity results report: apiVersion, kind, name, namespace.
pub fn resource_ref(item: &Value) -> ResourceRef {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    let metadata = item.get("metadata");
    ResourceRef {
        api_version: text(item.get("apiVersion")),
        kind: text(item.get("kind")),
        name: text(metadata.and_then(|m| m.get("name"))),
        namespace: metadata
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
            .map(str::to_string),
    }
}

/// Here rather than in `diag`, which stays below `krm`: reading an item's identity and file is
/// this module's business.
impl Origin {
    /// The item's root: its resource reference and its file, as [`Diagnostic::about`] reads
    /// them. A null item (no functionConfig was given) names nothing.
    pub fn of(item: &Value) -> Origin {
        if item.is_null() {
            return Origin::default();
        }
        let (path, index) = item_location(item);
        let location = Location { path, index, ..Location::default() };
        Origin { resource: Some(resource_ref(item)), location, field: crate::doc::FieldPath::root() }
    }
}

impl Diagnostic {
    /// Attaches the resource and its file location, read from the item's own metadata. A null
    /// item (no functionConfig was given) attaches nothing.
    pub fn about(mut self, item: &Value) -> Self {
        if item.is_null() {
            return self;
        }
        self.resource = Some(resource_ref(item));
        let (path, index) = item_location(item);
        if self.location.path.is_none() {
            self.location.path = path;
        }
        self.location.index = self.location.index.or(index);
        self
    }
}

/// What a secret value prints as where secrets are not shown.
pub const REDACTED: &str = "<redacted>";

/// Replaces every value of a Secret's `data` and `stringData` with [`REDACTED`] (the object's
/// kind is the caller's to check).
pub fn redact_secret_values(secret: &mut Value) {
    for field in ["data", "stringData"] {
        if let Some(map) = secret.get_mut(field).and_then(Value::as_object_mut) {
            map.values_mut().for_each(|entry| *entry = Value::String(REDACTED.into()));
        }
    }
}

pub fn name_of(item: &Value) -> &str {
    item.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default()
}

pub fn namespace_of(item: &Value) -> &str {
    item.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str).unwrap_or_default()
}

/// Pairs `(first, repeat)` of item positions with the same apiVersion, kind, namespace and name,
/// each repeat paired with the first of its identity; local-config and unnamed items are left
/// out. One pass over the keys each header keeps ([`Item::identity_key`]), so no header is
/// built; names are compared only where two keys are equal (a hash collision is no repeat).
pub fn repeated_identities<'a>(items: impl Iterator<Item = &'a Item>) -> Vec<(usize, usize)> {
    let items: Vec<&Item> = items.collect();
    let mut first: rustc_hash::FxHashMap<(&str, &str, u64), usize> = rustc_hash::FxHashMap::default();
    let mut pairs = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let key = item.identity_key();
        if key & (LOCAL_CONFIG_BIT | UNNAMED_BIT) != 0 {
            continue;
        }
        let (api_version, kind) = item.type_of();
        match first.get(&(api_version, kind, key)) {
            None => {
                first.insert((api_version, kind, key), index);
            }
            Some(&earlier) => {
                let (identity, earlier_identity) = (item.identity(), items[earlier].identity());
                if identity.name == earlier_identity.name && identity.namespace == earlier_identity.namespace {
                    pairs.push((earlier, index));
                }
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::cut::{moved_left, standalone_len, uses_anchors};
    use super::*;

    /// A step that keeps an item's [`Origin`] reports exactly what `about` on the item would.
    #[test]
    fn an_origin_names_what_the_item_would() {
        use crate::diag::{Kind, Severity};
        use crate::doc::FieldPath;
        let item = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n",
            "annotations": {"internal.config.kubernetes.io/path": "a.yaml", "internal.config.kubernetes.io/index": "2"}}});
        for item in [item, Value::Null] {
            let field = FieldPath::root().key("spec");
            let kept = Origin::of(&item).at(field.clone()).diagnostic(Severity::Warning, Kind::Render, "m", "x[0]");
            let direct = Diagnostic::warning(Kind::Render, "m").at(field.join(&FieldPath::parse("x[0]"))).about(&item);
            assert_eq!(kept, direct);
            let unplaced = Diagnostic::warning(Kind::Render, "m");
            assert_eq!(unplaced.clone().about_origin(&Origin::of(&item)), unplaced.about(&item));
        }
    }

    /// The line-by-line forms of the one-pass scans, as they were written first (and keeping
    /// the blank lines after `|+` at the very end, which the three-byte windows miss).
    fn standalone_len_by_lines(slice: &str, indent: usize) -> Option<usize> {
        let keeps = slice
            .as_bytes()
            .windows(3)
            .any(|w| matches!(w[0], b'|' | b'>') && (w[1] == b'+' || (w[1].is_ascii_digit() && w[2] == b'+')))
            || slice.ends_with("|+")
            || slice.ends_with(">+");
        let (whole, all) = (slice.len(), slice);
        let mut slice = slice;
        while let Some((body, line)) = slice.rsplit_once('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.len() > indent || line.bytes().any(|b| b != b' ') {
                break;
            }
            slice = body;
        }
        if keeps && slice.len() < whole {
            slice = all;
        }
        let slice = slice.strip_suffix('\r').unwrap_or(slice);
        let bytes = slice.as_bytes();
        if bytes.windows(2).any(|w| w[0] == b'\r' && w[1] != b'\n') || bytes.last() == Some(&b'\r') {
            return None;
        }
        let tied = bytes.windows(2).any(|w| {
            (w[0].is_ascii_whitespace() || matches!(w[0], b'[' | b'{' | b',' | b'-' | b':' | b'?'))
                && matches!(w[1], b'&' | b'*')
        }) || matches!(bytes.first(), Some(b'&' | b'*'));
        if tied && uses_anchors(&moved_left(slice, indent)) {
            return None;
        }
        for line in slice.split('\n').skip(1) {
            let content = line.trim_start_matches(' ');
            if line.len() - content.len() < indent
                && !content.trim_end_matches('\r').is_empty()
                && !content.starts_with('#')
            {
                return None;
            }
        }
        Some(slice.len())
    }

    fn write_list_element_by_lines(text: &str, indent: usize) -> Vec<u8> {
        let mut element = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                let line = &line[(line.len() - line.trim_start_matches(' ').len()).min(indent)..];
                if !line.is_empty() {
                    element.extend_from_slice(b"  ");
                }
                element.extend_from_slice(line.as_bytes());
            } else {
                element.extend_from_slice(if text.starts_with('\n') { b"-" } else { b"- " });
                element.extend_from_slice(line.as_bytes());
            }
            element.push(b'\n');
        }
        element
    }

    #[test]
    fn one_pass_scans_agree_with_the_line_by_line_forms() {
        const PIECES: [&str; 16] =
            ["a", " ", "  ", "\n", "\r\n", "\r", "|", "|+", ">2+", "&x", " *y", "#c", "- ", "k: v", "[&a]", "+"];
        let mut seed = 19u64;
        for _ in 0..200_000 {
            let mut text = String::new();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let mut bits = seed;
            for _ in 0..(seed >> 60) + 1 {
                text.push_str(PIECES[(bits & 15) as usize]);
                bits >>= 4;
            }
            for indent in [0, 1, 2, 4] {
                assert_eq!(standalone_len(&text, indent), standalone_len_by_lines(&text, indent), "{text:?} {indent}");
                let mut out = Vec::new();
                assert!(write_list_element(&mut out, &text, indent).is_ok());
                assert_eq!(out, write_list_element_by_lines(&text, indent), "{text:?} {indent}");
            }
        }
    }

    #[test]
    fn accepts_the_three_versions_and_list() {
        for head in [
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList",
            "apiVersion: config.kubernetes.io/v1beta1\nkind: ResourceList",
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: ResourceList",
            "apiVersion: v1\nkind: List",
        ] {
            let list = ResourceList::parse(format!("{head}\nitems: []\n").as_bytes());
            assert!(list.is_ok(), "{head}: {list:?}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_resource_list() {
        for (input, expected) in [
            ("a: [", "not valid YAML"),
            ("apiVersion: v1\nkind: ConfigMap", "got kind \"ConfigMap\""),
            ("- a", "it is a list, expected a mapping"),
            ("", "input is empty"),
            (
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1]",
                "items[0] is a number, not a mapping",
            ),
            ("{\"kind\": ", "is it truncated?"),
            ("apiVersion: v1\nkind: List", "kind: List without items"),
        ] {
            let err = ResourceList::parse(input.as_bytes()).err().map(|e| e.message).unwrap_or_default();
            assert!(err.contains(expected), "{input:?}: {err}");
        }
    }

    #[test]
    fn streaming_writes_the_same_bytes() {
        let list = ResourceList::parse(b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n");
        let Ok(list) = list else { panic!("parse") };
        let items = vec![
            json!({"a": "x\n\ny\n", "b": [1, {"c": "d\n"}], "e": {}, "f": [], "g": "  lead", "h": "t\n\n"}),
            json!({"k": [[1, 2], [3]], "m": {"n": {"o": "multi\nline"}}}),
        ];
        let results = vec![json!({"message": "m", "severity": "info"})];
        let mut streamed = Vec::new();
        let written = list.write_to(&mut streamed, items.iter().cloned().map(Item::from).collect(), results.clone());
        assert!(written.is_ok());
        assert_eq!(String::from_utf8_lossy(&streamed), list.write(items, results));
    }

    #[test]
    fn items_are_read_one_by_one_with_the_same_checks() {
        let ok = |input: &str| ResourceList::parse(input.as_bytes()).map_err(|e| e.message);
        let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";
        let list = ok(&format!(
            "# only a comment\n---\n{head}results: [{{message: old}}]\nitems:\n- {{kind: A, b: [1, {{c: 0644}}]}}\n"
        ));
        let items: Vec<Value> = list.map(|l| l.items.into_iter().map(Item::into_value).collect()).unwrap_or_default();
        assert_eq!(items, vec![json!({"kind": "A", "b": [1, {"c": 420}]})]);
        assert_eq!(ok(&format!("{head}items: null\n")).map(|l| l.items.len()), Ok(0));
        assert_eq!(ok(head).map(|l| l.items.len()), Ok(0));
        for (tail, expected) in [
            ("items: {a: 1}", "items is a mapping"),
            ("items: text", "items is a string"),
            ("items: [{a: 1}, [2]]", "items[1] is a list, not a mapping"),
            ("items: []\nfunctionConfig: 3", "functionConfig must be a mapping"),
        ] {
            let err = ok(&format!("{head}{tail}\n")).err().unwrap_or_default();
            assert!(err.contains(expected), "{tail}: {err}");
        }
        let err = ok(&format!("{head}items: []\n---\n{head}items: []\n")).err().unwrap_or_default();
        assert!(err.contains("2 YAML documents"), "{err}");
    }

    /// What `render-blueprint` writes for `input` when no step changes anything.
    fn passthrough(input: &str) -> String {
        let list = ResourceList::parse(input.as_bytes()).unwrap_or_else(|err| panic!("{err}"));
        let mut out = Vec::new();
        list.write_to(&mut out, list.items.clone(), Vec::new()).unwrap_or_else(|err| panic!("{err}"));
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn unchanged_items_are_written_as_read() {
        let items = "- apiVersion: v1\n  kind: ConfigMap # why\n  metadata: {name: a}\n  data:\n    n: 0x1F\n    \
                     f: 1.50\n    q: 'single'\n    mode: 0644\n    s: |-\n      text\n    # inside\n    \
                     list:\n      - 1\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: b\n";
        let input = format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}");
        let expected = format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}");
        assert_eq!(passthrough(&input), expected);
        // Indented lists, a functionConfig after them, trailing comments and blank lines.
        let indented: String = items.lines().map(|l| format!("    {l}\n")).collect();
        let input = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{indented}\n  # end\n\nfunctionConfig:\n  a: 1\n"
        );
        // The comment after the last item is in its text, so it stays.
        assert_eq!(passthrough(&input), format!("{expected}\n  # end\n"));
        // The last item before a document end marker.
        assert_eq!(passthrough(&format!("{expected}...\n")), expected);
    }

    #[test]
    fn items_that_cannot_stand_alone_are_emitted() {
        let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";
        let emitted = format!("{head}items:\n- a: 1\n  b:\n    c: 2\n");
        // A flow list, an alias.
        assert_eq!(passthrough(&format!("{head}items: [{{a: 1, b: {{c: 2}}}}]\n")), emitted);
        assert_eq!(passthrough(&format!("{head}x: &c {{c: 2}}\nitems:\n- a: 1\n  b: *c\n")), emitted);
        // A block scalar that keeps its trailing lines stands alone with the blank lines after it,
        // which are its own (issue 39).
        let input = format!("{head}items:\n- a: |+\n    x\n\n- b: 1\n");
        let values = |text: &str| -> Vec<Value> {
            ResourceList::parse(text.as_bytes())
                .map(|l| l.items.into_iter().map(Item::into_value).collect())
                .unwrap_or_default()
        };
        let kept = passthrough(&input);
        assert_eq!(values(&kept), vec![json!({"a": "x\n\n"}), json!({"b": 1})], "{kept}");
        assert_eq!(kept, input);
    }

    /// Each text reads to the same items after a passthrough, and a second passthrough changes
    /// nothing: what the cut takes off an item's text is never content.
    #[test]
    fn copied_items_keep_every_value() {
        let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";
        let values = |text: &str| -> Vec<Value> {
            let list = ResourceList::parse(text.as_bytes()).unwrap_or_else(|err| panic!("{err}: {text:?}"));
            list.items.into_iter().map(Item::into_value).collect()
        };
        for (items, copied) in [
            // Spaces and tabs at the end of a block scalar's last line are content.
            ("- a: |\n    x  \n- b: 1\n", true),
            ("- a: >-\n    x\t\n", true),
            ("- a: |-\n    x  \nfunctionConfig: ~\n", true),
            ("- a: |\n    x  ", true),
            // So is a line of spaces deeper than the scalar's indentation, and a lone `- `.
            ("    - a: |\n        x\n          \n    - b: 1\n", true),
            ("- a: |\n    x\n      \n\n", true),
            ("- a: |\n    x\n    - \n- b: 1\n", true),
            ("- a: |\r\n    x  \r\n- b: 1\r\n", true),
            // A no-break space or an ideographic space ends a plain scalar as any letter would.
            ("- a: x\u{a0}\n- b: y\u{3000}\n", true),
            // A document end after the last item.
            ("- a: |\n    x  \n...\n", true),
            // An alias after a tab, a tag handle of a %TAG directive, a carriage return alone.
            ("- a:\t*x\n", false),
            ("- a: !e!t x\n", false),
            ("    - a: 1\r      b: 2\n", false),
        ] {
            let input = format!("{head}x: &x 1\nitems:\n{items}");
            let input =
                if items.contains("!e!") { format!("%TAG !e! tag:example.com,2000:\n---\n{input}") } else { input };
            let once = passthrough(&input);
            assert_eq!(values(&once), values(&input), "{input:?} gave {once:?}");
            assert_eq!(passthrough(&once), once, "{input:?}");
            let list = ResourceList::parse(input.as_bytes()).unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(list.items[0].unchanged_source().is_some(), copied, "{input:?}");
        }
    }

    #[test]
    fn json_in_json_out() {
        let list = ResourceList::parse(br#"{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[]}"#);
        assert_eq!(list.map(|l| l.format).ok(), Some(Format::Json));
    }
}
