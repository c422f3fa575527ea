//! One input item, kept small until a step needs it.
//!
//! A parsed `serde_json::Value` costs about eleven times its YAML text (BENCHMARKS.md, issue 8),
//! and most steps read only an item's type, and some its metadata. An [`Item`] therefore holds
//! its `apiVersion` and `kind` as strings, its header (`apiVersion`, `kind`, `metadata`) and the
//! rest as compact JSON texts, and builds values on first access: the header for
//! [`Item::header`], the whole item for [`std::ops::Deref`]. Every step stays correct through
//! `Deref`; filters use [`Item::type_of`] and text scans ([`Item::contains_text`],
//! [`Item::header_contains`]) first, so untouched items are never built.
//!
//! An item read from YAML also keeps its source text ([`Item::set_source`]). As long as no step
//! changed its value, the writer copies that text instead of emitting the value again, so quoting,
//! flow style, number spellings, block scalar indicators and comments inside the item stay as the
//! user wrote them, and kpt writes back an unchanged file. Once a step changed it, the source is
//! still the base: only the changed nodes are written anew ([`Item::changed_yaml`]).

use super::head::{Head, HEADER};
use crate::doc::{Map, Value};
use std::cell::OnceCell;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// An item's YAML as read: its own copy at column 0, or where it is in the shared input (its
/// lines after the first to be moved `indent` columns left), which costs no copy.
#[derive(Clone)]
pub enum Source {
    Own(Box<str>),
    /// Positions of 32 bits keep an item 16 bytes smaller. The reader that cuts sources reads at
    /// most 64 MiB, so they always fit; [`Source::cut`] copies otherwise, to stay total.
    Cut {
        input: Arc<String>,
        start: u32,
        end: u32,
        indent: u32,
    },
}

impl Source {
    /// `input[start..end]`, its lines after the first to be moved `indent` columns left.
    pub fn cut(input: &Arc<String>, start: usize, end: usize, indent: usize) -> Source {
        match (u32::try_from(start), u32::try_from(end), u32::try_from(indent)) {
            (Ok(start), Ok(end), Ok(indent)) => Source::Cut { input: input.clone(), start, end, indent },
            _ => {
                Source::Own(super::cut::moved_left(input.get(start..end).unwrap_or_default(), indent).into_boxed_str())
            }
        }
    }

    /// The text as it is in the input, and how far its lines after the first move left.
    fn raw(&self) -> (&str, usize) {
        match self {
            Source::Own(text) => (text, 0),
            Source::Cut { input, start, end, indent } => {
                (input.get(*start as usize..*end as usize).unwrap_or_default(), *indent as usize)
            }
        }
    }

    /// The text at column 0, a document of its own.
    fn standalone(&self) -> std::borrow::Cow<'_, str> {
        match self.raw() {
            (text, 0) if text.ends_with('\n') => std::borrow::Cow::Borrowed(text),
            (text, indent) => {
                std::borrow::Cow::Owned(super::cut::moved_left(text.strip_suffix('\n').unwrap_or(text), indent))
            }
        }
    }
}

#[derive(Clone)]
pub struct Item {
    /// The type and the header as compact JSON; emptied once [`Item::header_mut`] changes the
    /// header.
    head_text: Head,
    /// The header, built from `head_text` on first use. Boxed, as `full`: a `Value` with its
    /// ordered map is 72 bytes, and most items never build either (10 000 items: 1.3 MB).
    head: OnceCell<Box<Value>>,
    /// The item as compact JSON with null in the header's fields; the header is laid over it on load.
    text: Box<str>,
    /// The whole item once a step has asked for it; then the only copy that counts.
    full: OnceCell<Box<Value>>,
    /// JSON pointers of strings to write quoted whatever the emitter would choose: a template
    /// kept in the package whose meaning depends on its quotes (KOTS types a plain template's
    /// result, not a quoted one's), so writing it back plain would change the next render.
    /// Boxed twice: few items have any, and a thin pointer keeps every item 8 bytes smaller.
    keep_quoted: Option<Box<Box<[String]>>>,
    /// The item's YAML as read.
    source: Option<Source>,
    /// Whether `text` is empty and the item is read from `source` when asked for
    /// ([`Item::from_source`]).
    lazy: bool,
    /// Hash of the compact texts as read, for an item read whole ([`Item::set_source`]): an
    /// item a step changed and changed back is unchanged. An item read from its source
    /// ([`Item::from_source`]) needs none: its source is checked against its value instead.
    read_hash: Option<u64>,
    /// Whether a step asked for the item mutably (it may have changed).
    touched: bool,
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with_value(|value| std::fmt::Debug::fmt(value, f))
    }
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        self.with_value(|a| other.with_value(|b| a == b))
    }
}

impl From<Value> for Item {
    fn from(mut value: Value) -> Self {
        let mut header = Map::new();
        if let Value::Object(map) = &mut value {
            for key in HEADER {
                // The text keeps a null in the field's place, so loading restores key order
                // without holding the header twice.
                if let Some(field) = map.get_mut(key) {
                    header.insert(key.to_string(), std::mem::take(field));
                }
            }
        }
        Item {
            head_text: Head::from(&header),
            head: OnceCell::new(),
            // Serializing a Value cannot fail: keys are strings, numbers finite.
            text: serde_json::to_string(&value).unwrap_or_default().into_boxed_str(),
            full: OnceCell::new(),
            keep_quoted: None,
            source: None,
            lazy: false,
            read_hash: None,
            touched: false,
        }
    }
}

fn hash_texts(head: &Head, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (head.api_version(), head.kind(), head.json(), text).hash(&mut hasher);
    hasher.finish()
}

impl Item {
    /// An item known by its header and its YAML `source` (standing alone, as
    /// [`Item::set_source`] keeps it); the rest is read from the source when a step asks for it.
    /// The caller has made sure the source reads without error to the item it was cut from.
    pub fn from_source(head: Head, source: Source) -> Self {
        let mut item = Item::from_head(head);
        item.attach(source);
        item
    }

    /// An item known by its header whose source [`Item::attach`] gives it next: the reader
    /// makes the items before it cuts their sources out, and drops them all if any cut fails, so
    /// no item without its source leaves it.
    pub(super) fn from_head(head: Head) -> Self {
        Item {
            head_text: head,
            head: OnceCell::new(),
            text: Box::default(),
            full: OnceCell::new(),
            keep_quoted: None,
            source: None,
            lazy: true,
            read_hash: None,
            touched: false,
        }
    }

    /// The source of an item from [`Item::from_head`]; see [`Item::from_source`].
    pub(super) fn attach(&mut self, source: Source) {
        self.source = Some(source);
    }

    /// Keeps `source`, the item's YAML as read (see the module's doc comment).
    pub fn set_source(&mut self, source: Box<str>) {
        self.read_hash = Some(hash_texts(&self.head_text, &self.text));
        self.source = Some(Source::Own(source));
    }

    /// The item's source text when its value is still the one read; `None` when it must be
    /// written from its value.
    pub fn unchanged_source(&self) -> Option<(&str, usize)> {
        let source = self.source.as_ref()?;
        if !self.touched {
            return Some(source.raw());
        }
        let unchanged = match self.read_hash {
            // Read from its source (a header change, or a splice [`Item::compact`] could not
            // make): built once, as an item that changed is written from this value next; the
            // check keeps key order, as the hash does.
            None => super::walk::reads_as(&source.standalone(), self.full.get_or_init(|| Box::new(self.load()))),
            Some(read) => {
                let now = match self.full.get() {
                    Some(full) => Item::from(Value::clone(full)),
                    None if self.head_text.json().is_empty() => Item::from(self.load()),
                    None => return (hash_texts(&self.head_text, &self.text) == read).then(|| source.raw()),
                };
                hash_texts(&now.head_text, &now.text) == read
            }
        };
        unchanged.then(|| source.raw())
    }

    /// An upper bound for the length of any string in the item: its compact text's length, or
    /// its source's (escapes and folding only shorten a string).
    pub fn text_len(&self) -> usize {
        let source = match (&self.source, self.lazy) {
            (Some(source), true) => source.raw().0.len(),
            _ => 0,
        };
        self.text.len() + self.head_text.text.len() + source
    }

    /// `apiVersion` and `kind`, as [`super::head::type_of`] reads them, without building anything.
    pub fn type_of(&self) -> (&str, &str) {
        match self.full.get().or(self.head.get()) {
            Some(value) => super::head::type_of(value),
            None => (self.head_text.api_version(), self.head_text.kind()),
        }
    }

    /// `apiVersion`, `kind` and `metadata`, without building the whole item. The helpers of
    /// [`crate::krm`] (`name_of`, `annotation`, selectors…) accept it like a full item.
    pub fn header(&self) -> &Value {
        match self.full.get() {
            Some(full) => full,
            None => self.head.get_or_init(|| Box::new(self.head_text.value())),
        }
    }

    /// The header, to change annotations or labels without building the whole item.
    pub fn header_mut(&mut self) -> &mut Value {
        self.touched = true;
        if self.full.get().is_some() {
            return cell_mut(&mut self.full);
        }
        self.header();
        self.head_text = Head::default();
        cell_mut(&mut self.head)
    }

    /// Whether `test` holds for some part of the item's text (a cheap first test before building
    /// the value), so a step can reuse its own text check (`may_substitute`, `has_template`).
    /// Strings are JSON-escaped in the text: a test for text without quotes or backslashes
    /// answers as it would on the strings themselves.
    pub fn scan_text(&self, test: impl Fn(&str) -> bool) -> bool {
        match (self.full.get(), self.source.as_ref().map(|source| source.raw().0)) {
            (Some(full), _) => test(&serde_json::to_string(full).unwrap_or_default()),
            // Without escapes a string's text is in the source as it is in the value (folded
            // lines join with a space, which no test looks for).
            (None, Some(source)) if self.lazy && !source.contains('\\') => test(source) || self.scan_header(&test),
            (None, _) if self.lazy => self.with_value(|value| test(&serde_json::to_string(value).unwrap_or_default())),
            (None, _) => test(&self.text) || self.scan_header(&test),
        }
    }

    /// Whether the item's text holds `needle`; see [`Item::scan_text`].
    pub fn contains_text(&self, needle: &str) -> bool {
        self.scan_text(|text| text.contains(needle))
    }

    /// Like [`Item::contains_text`], for the header only (annotation keys, labels).
    pub fn header_contains(&self, needle: &str) -> bool {
        self.scan_header(|text| text.contains(needle))
    }

    fn scan_header(&self, test: impl Fn(&str) -> bool) -> bool {
        match (self.full.get(), self.head.get()) {
            (None, _) if !self.head_text.json().is_empty() => self.head_text.scan(test),
            (Some(value), _) | (None, Some(value)) => test(&serde_json::to_string(value).unwrap_or_default()),
            (None, None) => false,
        }
    }

    fn load(&self) -> Value {
        let mut value = match (self.lazy, &self.source) {
            (true, Some(source)) => {
                let value = read_source(&source.standalone());
                if !self.touched {
                    // The header is as read.
                    return value;
                }
                value
            }
            _ => parse(&self.text),
        };
        let parsed;
        let header = match self.head.get() {
            Some(head) => head,
            None => {
                parsed = self.head_text.value();
                &parsed
            }
        };
        if let (Value::Object(map), Value::Object(header)) = (&mut value, header) {
            for key in HEADER {
                match header.get(key) {
                    // Inserting an existing key keeps its position, so key order is kept.
                    Some(field) => {
                        map.insert(key.to_string(), field.clone());
                    }
                    None => {
                        map.shift_remove(key);
                    }
                }
            }
        }
        value
    }

    /// Strings (by JSON pointer) the writer must quote; see the field.
    pub fn set_keep_quoted(&mut self, pointers: Vec<String>) {
        self.keep_quoted = (!pointers.is_empty()).then(|| Box::new(pointers.into_boxed_slice()));
    }

    pub fn take_keep_quoted(&mut self) -> Option<Box<[String]>> {
        self.keep_quoted.take().map(|pointers| *pointers)
    }

    /// Back to the compact form once a step is done with the whole item. A changed item read
    /// from its source ([`Item::from_source`]) is settled: its source with the changes written
    /// over it ([`super::splice`]) becomes its source, so the writer copies it and a later step
    /// reads it from there, with no JSON round trip; when that text is the source as it was, the
    /// item is unchanged. An item read whole keeps its source as read: `render` adds annotations
    /// to its documents and takes them off again, and the document must be compared with what
    /// was read, not with a text that held them.
    pub fn compact(&mut self) {
        self.compact_over(None);
    }

    /// [`Item::compact`], with the tree of the item's source when the caller has read it.
    fn compact_over(&mut self, tree: Option<&super::splice::Tree>) {
        if let Some(full) = self.full.take() {
            if !self.touched && self.lazy {
                return;
            }
            if let (true, None, Some(source)) = (self.touched, self.read_hash, &self.source) {
                let (standalone, spliced) = match tree {
                    Some(tree) => (std::borrow::Cow::Borrowed(tree.source()), tree.write(&full)),
                    None => {
                        let standalone = source.standalone();
                        let spliced = super::splice::write(&standalone, &full);
                        (standalone, spliced)
                    }
                };
                if let Some(text) = spliced {
                    let unchanged = text == *standalone;
                    let source = match self.source.take() {
                        Some(source) if unchanged => source,
                        _ => Source::Own(text.into_boxed_str()),
                    };
                    let keep_quoted = self.keep_quoted.take();
                    *self = Item::from_source(Head::of(&full), source);
                    self.keep_quoted = keep_quoted;
                    return;
                }
            }
            let keep_quoted = self.keep_quoted.take();
            let (source, touched, read_hash) = (self.source.take(), self.touched, self.read_hash);
            *self = Item::from(*full);
            (self.keep_quoted, self.source, self.touched, self.read_hash) = (keep_quoted, source, touched, read_hash);
        } else if let Some(head) = self.head.take() {
            if self.head_text.json().is_empty() {
                if let Value::Object(header) = &*head {
                    self.head_text = Head::from(header);
                }
            }
        }
    }

    /// Builds the whole item, hands it to `change`, and compacts it again ([`Item::compact`]).
    /// An item no step has touched is read from its source once, into a tree its changes are
    /// then written over, instead of once for its value and again for the splice. `change` gets
    /// the value, not the item, so it cannot compact the item and leave the tree stale.
    pub fn change<T>(&mut self, change: impl FnOnce(&mut Value) -> T) -> T {
        let pristine = self.lazy && !self.touched && self.read_hash.is_none() && self.full.get().is_none();
        let source = self.source.as_ref().filter(|_| pristine).map(|source| source.standalone().into_owned());
        let tree = source.as_deref().and_then(super::splice::read);
        if let Some(value) = tree.as_ref().and_then(super::splice::Tree::value) {
            let _ = self.full.set(Box::new(value));
        }
        let changed = change(self);
        self.compact_over(tree.as_ref());
        changed
    }

    /// The whole item, built now if it was not.
    pub fn into_value(self) -> Value {
        match self.full.get() {
            Some(_) => self.full.into_inner().map(|full| *full).unwrap_or_default(),
            None => self.load(),
        }
    }

    /// The item's source at column 0, for tests of the writer.
    #[cfg(test)]
    pub fn source_text(&self) -> Option<String> {
        self.source.as_ref().map(|source| source.standalone().into_owned())
    }

    /// Whether a step asked for the item mutably (it may have changed).
    pub fn is_touched(&self) -> bool {
        self.touched
    }

    /// The item's YAML for an item a step changed: its source with only the changed nodes written
    /// anew ([`super::splice`]), or, without a source the splice can keep, the value written whole
    /// (the strings at the JSON pointers `quoted` double-quoted; the splice keeps every untouched
    /// string's quotes anyway).
    pub fn changed_yaml(&self, quoted: Option<&[String]>) -> String {
        self.with_value(|value| {
            let spliced = self.source.as_ref().and_then(|source| super::splice::write(&source.standalone(), value));
            spliced.unwrap_or_else(|| match quoted {
                Some(pointers) => crate::doc::to_yaml_keeping_quotes(value, pointers),
                None => crate::doc::to_yaml(value),
            })
        })
    }

    /// Hands the whole item to `read` without keeping it built afterwards.
    pub fn with_value<T>(&self, read: impl FnOnce(&Value) -> T) -> T {
        match self.full.get() {
            Some(full) => read(full),
            None => read(&self.load()),
        }
    }
}

/// A lazy item's source, which the reader proved reads without error (`krm::scan`); null only
/// keeps this total.
fn read_source(source: &str) -> Value {
    if let Some(value) = super::walk::read_item(source) {
        return value;
    }
    match crate::doc::read_yaml_documents_as::<crate::doc::Strict>(source) {
        Ok(mut documents) if documents.len() == 1 => documents.pop().map(|d| d.0).unwrap_or_default(),
        _ => Value::Null,
    }
}

/// Our own compact JSON, of a value the readers and evaluators bounded in depth, always parses
/// (serde_json's recursion limit of 128 is off: it once turned items 128 to 255 levels deep into
/// null). Null only keeps this total.
fn parse(text: &str) -> Value {
    crate::doc::from_own_json(text).unwrap_or(Value::Null)
}

impl Deref for Item {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.full.get_or_init(|| Box::new(self.load()))
    }
}

impl DerefMut for Item {
    fn deref_mut(&mut self) -> &mut Value {
        if self.full.get().is_none() {
            let loaded = self.load();
            let _ = self.full.set(Box::new(loaded));
        }
        self.touched = true;
        // The whole item now holds the header; drop the separate copies.
        self.head = OnceCell::new();
        self.head_text = Head::default();
        self.text = Box::default();
        // Changes live in `full` now; the source is the reference only for `unchanged_source`.
        self.lazy = false;
        cell_mut(&mut self.full)
    }
}

/// The value of a cell that the caller has filled.
fn cell_mut(cell: &mut OnceCell<Box<Value>>) -> &mut Value {
    if cell.get().is_none() {
        let _ = cell.set(Box::default());
    }
    match cell.get_mut() {
        Some(value) => value,
        // A cell holds the value it was just given.
        None => unreachable!("a filled OnceCell is empty"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 10 000 items of the mixed benchmark package: every 8 bytes here are 80 KB of peak memory.
    #[test]
    fn an_item_stays_small() {
        assert!(std::mem::size_of::<Item>() <= 120, "{}", std::mem::size_of::<Item>());
    }

    /// The type's strings are kept once, before the header's JSON: the header (its keys in
    /// `HEADER`'s order) and the item (in its own) read back whole, whatever the type holds.
    #[test]
    fn the_header_reads_back_with_its_type() {
        for value in [
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "labels": {"kind": ""}}}),
            json!({"metadata": {"name": "a"}, "kind": "", "apiVersion": 5}),
            json!({"kind": {"x": "y"}, "apiVersion": "v\"1", "spec": {"kind": "x"}}),
            json!({"kind": null, "data": {"apiVersion": ""}}),
            json!({"data": {}}),
        ] {
            let item = Item::from(value.clone());
            let header: Map =
                HEADER.iter().filter_map(|key| Some((key.to_string(), value.get(key)?.clone()))).collect();
            let text = |value: &Value| serde_json::to_string(value).unwrap_or_default();
            assert_eq!(text(item.header()), text(&Value::Object(header)), "{value}");
            assert!(item.header_contains("Deployment") == (value["kind"] == "Deployment"), "{value}");
            assert_eq!(text(&item.into_value()), text(&value));
        }
    }

    /// An item read whole is unchanged until its value is: a new apiVersion of the same length
    /// and JSON is a change.
    #[test]
    fn a_changed_type_is_a_change() {
        let value = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let mut item = Item::from(value);
        item.set_source("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n".into());
        assert!(item.unchanged_source().is_some());
        item["apiVersion"] = json!("v2");
        item.compact();
        assert!(item.unchanged_source().is_none());
    }

    #[test]
    fn header_changes_survive_loading_and_key_order_is_kept() {
        let value = json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {"a": "1"}, "metadata": {"name": "x"}});
        let mut item = Item::from(value);
        crate::krm::set_annotation(item.header_mut(), "k", "v");
        assert_eq!(crate::krm::annotation(item.header(), "k"), Some("v"));
        let keys: Vec<String> = item.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        assert_eq!(keys, vec!["kind", "apiVersion", "data", "metadata"]);
        assert_eq!(item["metadata"], json!({"name": "x", "annotations": {"k": "v"}}));
        item["data"]["a"] = json!("2");
        crate::krm::set_annotation(item.header_mut(), "k", "w");
        assert_eq!(item.clone().into_value()["metadata"]["annotations"]["k"], json!("w"));
        assert_eq!(item.into_value()["data"]["a"], json!("2"));
    }

    #[test]
    fn text_scans_do_not_build_the_value() {
        let item = Item::from(json!({"kind": "A", "spec": {"x": "${v}"}}));
        assert!(item.contains_text("${"));
        assert!(!item.contains_text("repl{{"));
        assert!(item.full.get().is_none());
    }

    #[test]
    fn type_and_header_scans_build_nothing_and_compact_forgets_what_was_built() {
        let mut item = Item::from(json!({"apiVersion": "v1", "kind": "A", "metadata": {"name": "n"}, "spec": 1}));
        assert_eq!(item.type_of(), ("v1", "A"));
        assert!(item.header_contains("\"name\":\"n\""));
        assert!(!item.header_contains("spec"));
        assert!(item.head.get().is_none() && item.full.get().is_none());
        crate::krm::set_annotation(item.header_mut(), "k", "v");
        item.header_mut()["kind"] = json!("B");
        assert_eq!(item.type_of(), ("v1", "B"));
        item.compact();
        assert!(item.head.get().is_none());
        assert_eq!(item.type_of(), ("v1", "B"));
        assert!(item.header_contains("\"k\":\"v\""));
        item["spec"] = json!(2);
        item.compact();
        assert!(item.full.get().is_none());
        assert_eq!(
            item.into_value(),
            json!({"apiVersion": "v1", "kind": "B", "metadata": {"name": "n", "annotations": {"k": "v"}}, "spec": 2})
        );
    }

    #[test]
    fn items_without_a_header_or_a_mapping_survive() {
        for value in [json!({"spec": {"a": [1, 2]}}), json!({}), json!({"metadata": null, "kind": null})] {
            let item = Item::from(value.clone());
            assert_eq!(item.type_of(), ("", ""));
            assert_eq!(item.into_value(), value);
        }
    }
}
