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
//!
//! Which of these forms is the item at a given moment is its state ([`State`]), and each state
//! holds only what it needs, so no flag or empty text has to say which copy counts:
//!
//! - `Lazy`: read from its source ([`Item::from_source`]): the header as text, the source, and
//!   the values built from them on demand. [`Item::header_mut`] keeps it lazy, its header laid
//!   over what the source reads as.
//! - `Built`: handed to a step mutably ([`DerefMut`]): the value alone, and what it was read
//!   from as the baseline for [`Item::unchanged_source`].
//! - `Compact`: made from a value ([`From<Value>`]): compact JSON, with the source it was read
//!   from and the hash of its texts as read when it is kept ([`Item::set_source`]).
//!
//! [`Item::compact`] moves a built item back: to `Lazy` when its changes could be written over
//! its source ([`super::splice`]), else to `Compact`. The header is a state of its own within
//! `Lazy` and `Compact`: text, or the value [`Item::header_mut`] handed out, until the item is
//! compacted.

use super::head::{Head, HEADER};
use crate::doc::{Map, Value};
use std::cell::OnceCell;
use std::collections::HashSet;
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
    ///
    /// A cut that ends in a line break (blank lines a `|+` block scalar may own) is copied: the
    /// writer and [`Source::standalone`] take a cut's last line break for the one that ends it.
    pub fn cut(input: &Arc<String>, start: usize, end: usize, indent: usize) -> Source {
        let ends_blank = input.get(start..end).is_none_or(|text| text.ends_with('\n'));
        match (u32::try_from(start), u32::try_from(end), u32::try_from(indent)) {
            (Ok(start), Ok(end), Ok(indent)) if !ends_blank => Source::Cut { input: input.clone(), start, end, indent },
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

/// The header (`apiVersion`, `kind`, `metadata`) of an item that is not built whole.
#[derive(Clone)]
enum Header {
    /// As read or last compacted: the compact text, and the value built from it on first use
    /// ([`Item::header`]). Boxed, as the whole item: a `Value` with its ordered map is 72 bytes,
    /// and most items never build either (10 000 items: 1.3 MB).
    Text(Head, OnceCell<Box<Value>>),
    /// Handed out by [`Item::header_mut`]: the value is the only copy that counts, until
    /// [`Item::compact`] writes it back as text.
    Changed(Box<Value>),
}

impl Header {
    /// The header's value, built now if it was not.
    fn value(&self) -> &Value {
        match self {
            Header::Text(head, value) => value.get_or_init(|| Box::new(head.value())),
            Header::Changed(value) => value,
        }
    }

    /// The header's value if it is built.
    fn built(&self) -> Option<&Value> {
        match self {
            Header::Text(_, value) => value.get().map(|value| &**value),
            Header::Changed(value) => Some(value),
        }
    }

    /// The header's value, for a step to change: from now on it is the header.
    fn changed(&mut self) -> &mut Value {
        if let Header::Text(head, value) = self {
            let value = value.take().unwrap_or_else(|| Box::new(head.value()));
            *self = Header::Changed(value);
        }
        match self {
            Header::Changed(value) => value,
            // Made `Changed` just above.
            Header::Text(..) => unreachable!("a changed header is text"),
        }
    }

    /// `apiVersion` and `kind`, from the value when it is built.
    fn type_of(&self) -> (&str, &str) {
        match self {
            Header::Text(head, value) => match value.get() {
                Some(value) => super::head::type_of(value),
                None => (head.api_version(), head.kind()),
            },
            Header::Changed(value) => super::head::type_of(value),
        }
    }

    /// The length of the compact text; 0 for a changed header, which has none.
    fn text_len(&self) -> usize {
        match self {
            Header::Text(head, _) => head.text.len(),
            Header::Changed(_) => 0,
        }
    }

    /// Back to text: forgets the built value, and writes a changed one as text.
    fn compact(&mut self) {
        match self {
            Header::Text(_, value) => {
                value.take();
            }
            Header::Changed(value) => {
                let head = match &**value {
                    Value::Object(header) => Head::from(header),
                    _ => Head::default(),
                };
                *self = Header::Text(head, OnceCell::new());
            }
        }
    }
}

/// An item's YAML as read, and how to tell whether the item still reads as it.
#[derive(Clone)]
enum Read {
    /// Read whole ([`Item::set_source`]): the hash of its compact texts as read, so an item a step
    /// changed and changed back is unchanged.
    Hashed(Source, u64),
    /// Read from its source ([`Item::from_source`]), changed, and not settled by a splice: the
    /// source is read again and compared with the value (which keeps key order, as the hash
    /// does).
    Reread(Source),
}

impl Read {
    fn source(&self) -> &Source {
        match self {
            Read::Hashed(source, _) | Read::Reread(source) => source,
        }
    }
}

/// Which of an item's forms is live; see the module's doc comment.
#[derive(Clone)]
enum State {
    /// Read from its YAML source ([`Item::from_source`]): the header as text, the rest read
    /// from the source when a step asks for it, which is then kept in `full` until
    /// [`Item::compact`]. `header_changed` once [`Item::header_mut`] handed the header out: the
    /// header is then laid over what the source reads as.
    Lazy { head: Header, source: Source, full: OnceCell<Box<Value>>, header_changed: bool },
    /// Handed to a step mutably ([`DerefMut`], or [`Item::header_mut`] once the whole item was
    /// built): the value is the only form that counts, until [`Item::compact`]; `read` is the
    /// baseline [`Item::unchanged_source`] compares it with.
    Built { full: Box<Value>, read: Option<Read> },
    /// From a value ([`From<Value>`], or a built item compacted): the header and the rest as
    /// compact JSON (the rest with null in the header's fields; the header is laid over it on
    /// load), the whole item built into `full` on first use. `touched` once a step asked for
    /// the item mutably; `read` the source it was read from, if it is kept.
    Compact { head: Header, text: Box<str>, full: OnceCell<Box<Value>>, read: Option<Read>, touched: bool },
}

impl State {
    fn lazy(head: Head, source: Source) -> State {
        State::Lazy { head: Header::Text(head, OnceCell::new()), source, full: OnceCell::new(), header_changed: false }
    }

    fn compact(head: Head, text: Box<str>, read: Option<Read>, touched: bool) -> State {
        State::Compact { head: Header::Text(head, OnceCell::new()), text, full: OnceCell::new(), read, touched }
    }

    /// The whole item, built from its source or its texts (a built item's value, copied).
    fn load(&self) -> Value {
        let (mut value, head) = match self {
            State::Lazy { head, source, header_changed, .. } => {
                let value = read_source(&source.standalone());
                if !header_changed {
                    // The header is as read.
                    return value;
                }
                (value, head)
            }
            State::Compact { head, text, .. } => (parse(text), head),
            State::Built { full, .. } => return Value::clone(full),
        };
        let parsed;
        let header = match head {
            Header::Text(_, value) if value.get().is_some() => head.value(),
            Header::Text(text, _) => {
                parsed = text.value();
                &parsed
            }
            Header::Changed(value) => value,
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
}

#[derive(Clone)]
pub struct Item {
    state: State,
    /// What few items need besides their forms. Boxed: a thin pointer keeps every item small.
    extra: Option<Box<Extra>>,
}

#[derive(Clone, Default)]
struct Extra {
    /// JSON pointers of strings to write quoted whatever the emitter would choose: a template
    /// kept in the package whose meaning depends on its quotes (KOTS types a plain template's
    /// result, not a quoted one's), so writing it back plain would change the next render.
    keep_quoted: Option<Box<[String]>>,
    /// Which scalars were quoted, for an item read without a source of its own.
    quoted: Option<Quoted>,
}

/// Which of an item's scalars holding `$` or a KOTS template were written quoted (or as block
/// scalars), given by the reader when the item keeps no source to answer from.
#[derive(Clone, Debug)]
pub enum Quoted {
    /// Read from JSON, whose strings are all quoted.
    All,
    /// By JSON pointer from the item's root ([`crate::doc::quoted_template_scalars`]).
    At(HashSet<String>),
}

/// Answers whether a scalar of an item was quoted in what the item was read from.
///
/// Flux substitutes a resource's text and KOTS renders its templates in the text, so the type a
/// new scalar reads as depends on the quotes around it, which the value model drops. The answer
/// comes from the item's own source, read for styles only when a step first asks; an item
/// without one answers from what its reader gave ([`Item::set_quoted`]), else as plain.
pub struct QuotedScalars<'a> {
    source: Option<&'a Source>,
    given: Option<&'a Quoted>,
    scanned: OnceCell<HashSet<String>>,
}

/// The JSON pointers of the strings of `value` holding `$` or a KOTS template: those whose quotes
/// matter ([`crate::doc::quoted_template_scalars`] finds the same in YAML text).
fn template_strings(value: &Value) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut stack = vec![(String::new(), value)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::String(s) if s.contains('$') || s.contains("repl{{") || s.contains("{{repl") => {
                found.insert(pointer);
            }
            Value::Object(map) => stack.extend(
                map.iter().map(|(key, value)| (format!("{pointer}/{}", crate::doc::pointer_segment(key)), value)),
            ),
            Value::Array(list) => {
                stack.extend(list.iter().enumerate().map(|(index, value)| (format!("{pointer}/{index}"), value)));
            }
            _ => {}
        }
    }
    found
}

impl QuotedScalars<'_> {
    /// Whether the scalar at JSON pointer `pointer` (from the item's root) was quoted.
    pub fn is_quoted(&self, pointer: &str) -> bool {
        match (self.given, self.source) {
            (Some(Quoted::All), _) => true,
            (Some(Quoted::At(pointers)), _) => pointers.contains(pointer),
            (None, Some(source)) => self
                .scanned
                .get_or_init(|| {
                    crate::doc::quoted_template_scalars(&source.standalone()).into_iter().next().unwrap_or_default()
                })
                .contains(pointer),
            (None, None) => false,
        }
    }
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
    fn from(value: Value) -> Self {
        let (head, text) = texts(value);
        Item { state: State::compact(head, text, None, false), extra: None }
    }
}

/// The compact texts of a whole item: its header, and the rest with null in the header's fields.
fn texts(mut value: Value) -> (Head, Box<str>) {
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
    // Serializing a Value cannot fail: keys are strings, numbers finite.
    (Head::from(&header), serde_json::to_string(&value).unwrap_or_default().into_boxed_str())
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
        Item { state: State::lazy(head, source), extra: None }
    }

    /// An item known by its header whose source [`Item::attach`] gives it next (an empty one
    /// until then): the reader makes the items before it cuts their sources out, and drops them
    /// all if any cut fails, so no item without its source leaves it.
    pub(super) fn from_head(head: Head) -> Self {
        Item::from_source(head, Source::Own(Box::default()))
    }

    /// The source of an item from [`Item::from_head`]; see [`Item::from_source`].
    pub(super) fn attach(&mut self, source: Source) {
        match &mut self.state {
            State::Lazy { source: own, .. } => *own = source,
            State::Built { read, .. } | State::Compact { read, .. } => {
                *read = Some(match read.take() {
                    Some(Read::Hashed(_, hash)) => Read::Hashed(source, hash),
                    _ => Read::Reread(source),
                });
            }
        }
    }

    /// Keeps `source`, the item's YAML as read (see the module's doc comment), with the hash of
    /// the item's compact texts as they are now. Meant for an item made from the value read; an
    /// item read from a source ([`Item::from_source`]) gets the new source in its place.
    pub fn set_source(&mut self, source: Box<str>) {
        let source = Source::Own(source);
        if let State::Lazy { source: own, .. } = &mut self.state {
            *own = source;
            return;
        }
        let hash = self.hash_now();
        if let State::Built { read, .. } | State::Compact { read, .. } = &mut self.state {
            *read = Some(Read::Hashed(source, hash));
        }
    }

    /// The hash of the item's compact texts as they are now, from the texts themselves while
    /// they are the item.
    fn hash_now(&self) -> u64 {
        let (head, text) = match &self.state {
            State::Compact { head: Header::Text(head, _), text, full, .. } if full.get().is_none() => {
                return hash_texts(head, text);
            }
            State::Compact { head: Header::Changed(_), full, .. } if full.get().is_none() => texts(self.load()),
            _ => texts(Value::clone(self)),
        };
        hash_texts(&head, &text)
    }

    /// The item's source text when its value is still the one read; `None` when it must be
    /// written from its value.
    pub fn unchanged_source(&self) -> Option<(&str, usize)> {
        let (read, touched) = match &self.state {
            State::Lazy { source, header_changed: false, .. } => return Some(source.raw()),
            // A header change: built once, as an item that changed is written from this value
            // next.
            State::Lazy { source, .. } => {
                return super::walk::reads_as(&source.standalone(), self).then(|| source.raw());
            }
            State::Built { read, .. } => (read.as_ref()?, true),
            State::Compact { read, touched, .. } => (read.as_ref()?, *touched),
        };
        let unchanged = match read {
            _ if !touched => true,
            // A splice [`Item::compact`] could not make: built once, as above.
            Read::Reread(source) => super::walk::reads_as(&source.standalone(), self),
            Read::Hashed(_, hash) => self.hash_now() == *hash,
        };
        unchanged.then(|| read.source().raw())
    }

    /// An upper bound for the length of any string in an item as read: its compact text's
    /// length, or its source's (escapes and folding only shorten a string). A built item has no
    /// text, and answers 0.
    pub fn text_len(&self) -> usize {
        match &self.state {
            State::Lazy { head, source, .. } => head.text_len() + source.raw().0.len(),
            State::Built { .. } => 0,
            State::Compact { head, text, .. } => text.len() + head.text_len(),
        }
    }

    /// `apiVersion` and `kind`, as [`super::head::type_of`] reads them, without building anything.
    pub fn type_of(&self) -> (&str, &str) {
        match &self.state {
            State::Built { full, .. } => super::head::type_of(full),
            State::Lazy { head, full, .. } | State::Compact { head, full, .. } => match full.get() {
                Some(full) => super::head::type_of(full),
                None => head.type_of(),
            },
        }
    }

    /// `apiVersion`, `kind` and `metadata`, without building the whole item. The helpers of
    /// [`crate::krm`] (`name_of`, `annotation`, selectors…) accept it like a full item.
    pub fn header(&self) -> &Value {
        match &self.state {
            State::Built { full, .. } => full,
            State::Lazy { head, full, .. } | State::Compact { head, full, .. } => match full.get() {
                Some(full) => full,
                None => head.value(),
            },
        }
    }

    /// [`super::head::identity_key`] of the item: kept with the header while it is text, else
    /// made from its value. Cheap for every item, so a check over all of them costs no parse.
    pub fn identity_key(&self) -> u64 {
        match &self.state {
            State::Lazy { head: Header::Text(text, _), full, .. }
            | State::Compact { head: Header::Text(text, _), full, .. }
                if full.get().is_none() && !text.json().is_empty() =>
            {
                text.identity()
            }
            _ => super::head::identity_key(self.header().get("metadata")),
        }
    }

    /// The metadata that tells objects apart and whether one is applied, read from the header's
    /// text while it is text (no value built: a check over every item, such as the one for
    /// repeated identities, must not cost what building every header costs).
    pub fn identity(&self) -> Identity<'_> {
        let text = match &self.state {
            State::Lazy { head, full, .. } | State::Compact { head, full, .. } => match (full.get(), head) {
                (None, Header::Text(text, built)) if built.get().is_none() && !text.json().is_empty() => {
                    Some(text.json())
                }
                _ => None,
            },
            State::Built { .. } => None,
        };
        if let Some(view) = text.and_then(|text| serde_json::from_str::<HeaderView<'_>>(text).ok()) {
            let metadata = view.metadata.unwrap_or_default();
            let annotations = metadata.annotations.unwrap_or_default();
            return Identity {
                name: metadata.name.unwrap_or_default(),
                namespace: metadata.namespace.unwrap_or_default(),
                local_config: annotations.local_config.is_some_and(|v| v != "false"),
                path: annotations.path.or(annotations.legacy_path),
            };
        }
        // Read here rather than with `krm`'s helpers, which sit above this module.
        let metadata = self.header().get("metadata");
        let field =
            |key: &str| metadata.and_then(|m| m.get(key)).and_then(Value::as_str).map(std::borrow::Cow::Borrowed);
        let annotations = metadata.and_then(|m| m.get("annotations"));
        let annotation =
            |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_str).map(std::borrow::Cow::Borrowed);
        Identity {
            name: field("name").unwrap_or_default(),
            namespace: field("namespace").unwrap_or_default(),
            local_config: annotation("config.kubernetes.io/local-config").is_some_and(|v| v != "false"),
            path: annotation("internal.config.kubernetes.io/path").or_else(|| annotation("config.kubernetes.io/path")),
        }
    }

    /// The header, to change annotations or labels without building the whole item. Once the
    /// whole item is built, it is the item that changes ([`DerefMut`]).
    pub fn header_mut(&mut self) -> &mut Value {
        if self.is_built_whole() {
            return self.deref_mut();
        }
        let (head, touched) = match &mut self.state {
            State::Lazy { head, header_changed, .. } => (head, header_changed),
            State::Compact { head, touched, .. } => (head, touched),
            State::Built { full, .. } => return full,
        };
        *touched = true;
        head.changed()
    }

    /// Whether `test` holds for some part of the item's text (a cheap first test before building
    /// the value), so a step can reuse its own text check (`may_substitute`, `has_template`).
    /// Strings are JSON-escaped in the text: a test for text without quotes or backslashes
    /// answers as it would on the strings themselves.
    pub fn scan_text(&self, test: impl Fn(&str) -> bool) -> bool {
        let whole = |value: &Value| test(&serde_json::to_string(value).unwrap_or_default());
        match &self.state {
            State::Built { full, .. } => whole(full),
            State::Lazy { full, source, .. } => match (full.get(), source.raw().0) {
                (Some(full), _) => whole(full),
                // Without escapes a string's text is in the source as it is in the value (folded
                // lines join with a space, which no test looks for).
                (None, source) if !source.contains('\\') => test(source) || self.scan_header(&test),
                (None, _) => self.with_value(whole),
            },
            State::Compact { full, text, .. } => match full.get() {
                Some(full) => whole(full),
                None => test(text) || self.scan_header(&test),
            },
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

    /// The header's compact text while it has one; else the text of the whole item if it is
    /// built, or of the header.
    fn scan_header(&self, test: impl Fn(&str) -> bool) -> bool {
        let (head, full) = match &self.state {
            State::Built { full, .. } => return test(&serde_json::to_string(full).unwrap_or_default()),
            State::Lazy { head, full, .. } | State::Compact { head, full, .. } => (head, full),
        };
        match (head, full.get().map(|full| &**full).or(head.built())) {
            (Header::Text(text, _), _) if !text.json().is_empty() => text.scan(test),
            (_, Some(value)) => test(&serde_json::to_string(value).unwrap_or_default()),
            (_, None) => false,
        }
    }

    /// The whole item, built from its source or its texts (a built item's value, copied).
    fn load(&self) -> Value {
        self.state.load()
    }

    /// Strings (by JSON pointer) the writer must quote; see [`Extra::keep_quoted`].
    pub fn set_keep_quoted(&mut self, pointers: Vec<String>) {
        let pointers = (!pointers.is_empty()).then(|| pointers.into_boxed_slice());
        if pointers.is_some() || self.extra.is_some() {
            self.extra.get_or_insert_with(Box::default).keep_quoted = pointers;
        }
    }

    pub fn take_keep_quoted(&mut self) -> Option<Box<[String]>> {
        self.extra.as_mut().and_then(|extra| extra.keep_quoted.take())
    }

    /// Which scalars were quoted, for an item its reader could not keep a source for (see
    /// [`QuotedScalars`]).
    pub fn set_quoted(&mut self, quoted: Quoted) {
        self.extra.get_or_insert_with(Box::default).quoted = Some(quoted);
    }

    /// Whether the item keeps the YAML it was read from.
    pub fn has_source(&self) -> bool {
        self.source().is_some()
    }

    /// Which of the item's scalars were quoted where it was read (see [`QuotedScalars`]).
    pub fn quoted_scalars(&self) -> QuotedScalars<'_> {
        let given = self.extra.as_ref().and_then(|extra| extra.quoted.as_ref());
        QuotedScalars { source: self.source(), given, scanned: OnceCell::new() }
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
        // The whole item if it is built; else only the header's value is forgotten or written
        // back as text.
        let cached = match &mut self.state {
            State::Built { .. } => None,
            State::Lazy { head, full, header_changed, .. } => match full.take() {
                // Unchanged: the source still is the item.
                Some(_) if !*header_changed => return,
                Some(full) => Some(full),
                None => return head.compact(),
            },
            State::Compact { head, full, .. } => match full.take() {
                Some(full) => Some(full),
                None => return head.compact(),
            },
        };
        let placeholder = State::compact(Head::default(), Box::default(), None, false);
        let (full, read, touched) = match std::mem::replace(&mut self.state, placeholder) {
            State::Built { full, read } => (full, read, true),
            // `cached` is the whole item here; null only keeps this total.
            State::Lazy { source, .. } => (cached.unwrap_or_default(), Some(Read::Reread(source)), true),
            State::Compact { read, touched, .. } => (cached.unwrap_or_default(), read, touched),
        };
        if let (true, Some(Read::Reread(source))) = (touched, &read) {
            let spliced = match tree {
                Some(tree) => tree.write(&full).map(|text| {
                    let unchanged = text == tree.source();
                    (text, unchanged)
                }),
                None => {
                    let standalone = source.standalone();
                    super::splice::write(&standalone, &full).map(|text| {
                        let unchanged = text == *standalone;
                        (text, unchanged)
                    })
                }
            };
            if let Some((text, unchanged)) = spliced {
                let source = match read {
                    Some(Read::Reread(source)) if unchanged => source,
                    _ => Source::Own(text.into_boxed_str()),
                };
                self.state = State::lazy(Head::of(&full), source);
                return;
            }
        }
        let (head, text) = texts(*full);
        self.state = State::compact(head, text, read, touched);
    }

    /// Builds the whole item, hands it to `change`, and compacts it again ([`Item::compact`]).
    /// An item no step has touched is read from its source once, into a tree its changes are
    /// then written over, instead of once for its value and again for the splice. `change` gets
    /// the value, not the item, so it cannot compact the item and leave the tree stale.
    pub fn change<T>(&mut self, change: impl FnOnce(&mut Value) -> T) -> T {
        self.change_knowing_quotes(|value, _| change(value))
    }

    /// [`Item::change`], telling `change` which scalars were quoted where the item was read
    /// ([`Item::quoted_scalars`]), as substitution must know.
    pub fn change_knowing_quotes<T>(&mut self, change: impl FnOnce(&mut Value, &QuotedScalars<'_>) -> T) -> T {
        let source = match &self.state {
            State::Lazy { source, full, header_changed: false, .. } if full.get().is_none() => {
                Some(source.standalone().into_owned())
            }
            _ => None,
        };
        let tree = source.as_deref().and_then(super::splice::read);
        if let (Some(value), State::Lazy { full, .. }) =
            (tree.as_ref().and_then(super::splice::Tree::value), &self.state)
        {
            let _ = full.set(Box::new(value));
        }
        let changed = {
            let given = self.extra.as_ref().and_then(|extra| extra.quoted.as_ref());
            let (full, read) = built(&mut self.state);
            // A JSON item's strings were all quoted: the ones it holds now, not what a patch puts
            // in (whose own text, YAML, says how it is quoted), as for the same item in YAML
            // with every string quoted.
            let strings;
            let given = match given {
                Some(Quoted::All) => {
                    strings = Quoted::At(template_strings(full));
                    Some(&strings)
                }
                other => other,
            };
            change(full, &QuotedScalars { source: read.as_ref().map(Read::source), given, scanned: OnceCell::new() })
        };
        self.compact_over(tree.as_ref());
        changed
    }

    /// The whole item, built now if it was not.
    pub fn into_value(mut self) -> Value {
        let cached = match &mut self.state {
            State::Built { full, .. } => return std::mem::take(full),
            State::Lazy { full, .. } | State::Compact { full, .. } => full.take(),
        };
        match cached {
            Some(full) => *full,
            None => self.load(),
        }
    }

    /// The item's YAML as read, if it is kept.
    fn source(&self) -> Option<&Source> {
        match &self.state {
            State::Lazy { source, .. } => Some(source),
            State::Built { read, .. } | State::Compact { read, .. } => read.as_ref().map(Read::source),
        }
    }

    /// The item's source at column 0, for tests of the writer.
    #[cfg(test)]
    pub fn source_text(&self) -> Option<String> {
        self.source().map(|source| source.standalone().into_owned())
    }

    /// Whether the whole item is built (in state `Built`, or through [`Deref`]).
    fn is_built_whole(&self) -> bool {
        match &self.state {
            State::Built { .. } => true,
            State::Lazy { full, .. } | State::Compact { full, .. } => full.get().is_some(),
        }
    }

    /// Whether the header's value is built apart from the whole item (for tests).
    #[cfg(test)]
    fn is_header_built(&self) -> bool {
        match &self.state {
            State::Built { .. } => false,
            State::Lazy { head, .. } | State::Compact { head, .. } => head.built().is_some(),
        }
    }

    /// Whether a step asked for the item mutably (it may have changed).
    pub fn is_touched(&self) -> bool {
        match &self.state {
            State::Lazy { header_changed, .. } => *header_changed,
            State::Built { .. } => true,
            State::Compact { touched, .. } => *touched,
        }
    }

    /// The item's YAML for an item a step changed: its source with only the changed nodes written
    /// anew ([`super::splice`]), or, without a source the splice can keep, the value written whole
    /// (the strings at the JSON pointers `quoted` double-quoted; the splice keeps every untouched
    /// string's quotes anyway).
    pub fn changed_yaml(&self, quoted: Option<&[String]>) -> String {
        self.with_value(|value| {
            let spliced = self.source().and_then(|source| super::splice::write(&source.standalone(), value));
            spliced.unwrap_or_else(|| {
                // Written whole: a string holding `$` or a KOTS template that was quoted stays
                // quoted, so that no later substitution gives it another type.
                let mut pointers = quoted.map(<[String]>::to_vec).unwrap_or_default();
                pointers.extend(self.quoted_templates());
                if pointers.is_empty() {
                    crate::doc::to_yaml(value)
                } else {
                    crate::doc::to_yaml_keeping_quotes(value, &pointers)
                }
            })
        })
    }

    /// The JSON pointers of the strings holding `$` or a KOTS template that were quoted where
    /// the item was read (see [`QuotedScalars`]; none for JSON, which is written as JSON).
    fn quoted_templates(&self) -> Vec<String> {
        match (self.extra.as_ref().and_then(|extra| extra.quoted.as_ref()), self.source()) {
            (Some(Quoted::At(pointers)), _) => pointers.iter().cloned().collect(),
            (None, Some(source)) => crate::doc::quoted_template_scalars(&source.standalone())
                .into_iter()
                .next()
                .map(|pointers| pointers.into_iter().collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The item's YAML at column 0 as it is now: its source while no step changed it, else
    /// [`Item::changed_yaml`]. For steps that read an item as text (KOTS renders a file's text).
    pub fn yaml_text(&self, quoted: Option<&[String]>) -> String {
        match (self.unchanged_source(), self.source()) {
            (Some(_), Some(source)) => source.standalone().into_owned(),
            _ => self.changed_yaml(quoted),
        }
    }

    /// Hands the whole item to `read` without keeping it built afterwards.
    pub fn with_value<T>(&self, read: impl FnOnce(&Value) -> T) -> T {
        match &self.state {
            State::Built { full, .. } => read(full),
            State::Lazy { full, .. } | State::Compact { full, .. } => match full.get() {
                Some(full) => read(full),
                None => read(&self.load()),
            },
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
        match &self.state {
            State::Built { full, .. } => full,
            State::Lazy { full, .. } | State::Compact { full, .. } => full.get_or_init(|| Box::new(self.load())),
        }
    }
}

impl DerefMut for Item {
    fn deref_mut(&mut self) -> &mut Value {
        built(&mut self.state).0
    }
}

/// Moves an item to [`State::Built`]: the whole item now holds the header, so the separate
/// copies go; the source stays, as the baseline for [`Item::unchanged_source`]. Returns the
/// value, to change, and the baseline.
fn built(state: &mut State) -> (&mut Value, &Option<Read>) {
    if let State::Lazy { full, .. } | State::Compact { full, .. } = state {
        let full = match full.take() {
            Some(full) => full,
            None => Box::new(state.load()),
        };
        let placeholder = State::compact(Head::default(), Box::default(), None, false);
        let read = match std::mem::replace(state, placeholder) {
            State::Lazy { source, .. } => Some(Read::Reread(source)),
            State::Built { read, .. } | State::Compact { read, .. } => read,
        };
        *state = State::Built { full, read };
    }
    match state {
        State::Built { full, read } => (full, read),
        // Made `Built` just above.
        _ => unreachable!("an item handed out mutably is not built"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The identity read from the header's text is the one read from its value, escapes,
    /// missing fields, a local-config of "false" and a metadata that is not a mapping included.
    #[test]
    fn identity_from_text_is_identity_from_value() {
        let text = r#"apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: "a\u00e9b"
    namespace: team
    annotations:
      config.kubernetes.io/local-config: "false"
      internal.config.kubernetes.io/path: "dir/a \"b\".yaml"
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: local
    annotations: {config.kubernetes.io/local-config: "true", config.kubernetes.io/path: old.yaml}
- apiVersion: v1
  kind: Thing
  metadata: [not, a, mapping]
- {apiVersion: v1, kind: Nameless}
"#;
        let list = crate::krm::ResourceList::parse_shared(&Arc::new(text.to_string()), 1 << 20);
        let items = list.map(|list| list.items).unwrap_or_default();
        assert_eq!(items.len(), 4);
        let owned = |identity: Identity<'_>| {
            (
                identity.name.into_owned(),
                identity.namespace.into_owned(),
                identity.local_config,
                identity.path.map(|p| p.into_owned()),
            )
        };
        let from_text: Vec<_> = items.iter().map(|item| owned(item.identity())).collect();
        let keys: Vec<u64> = items.iter().map(Item::identity_key).collect();
        let built: Vec<Item> = items.iter().map(|item| Item::from(item.with_value(Clone::clone))).collect();
        assert_eq!(keys, built.iter().map(Item::identity_key).collect::<Vec<_>>());
        assert_eq!(keys[1] & crate::krm::LOCAL_CONFIG_BIT, crate::krm::LOCAL_CONFIG_BIT);
        assert_eq!(keys[0] & (crate::krm::LOCAL_CONFIG_BIT | crate::krm::UNNAMED_BIT), 0);
        assert_eq!(keys[3] & crate::krm::UNNAMED_BIT, crate::krm::UNNAMED_BIT);
        for item in &items {
            let _ = item.header();
        }
        let from_value: Vec<_> = items.iter().map(|item| owned(item.identity())).collect();
        assert_eq!(from_text, from_value);
        assert_eq!(from_text[0], ("a\u{e9}b".into(), "team".into(), false, Some("dir/a \"b\".yaml".into())));
        assert_eq!(from_text[1], ("local".into(), String::new(), true, Some("old.yaml".into())));
    }

    /// 10 000 items of the mixed benchmark package: every 8 bytes here are 80 KB of peak memory.
    #[test]
    fn an_item_stays_small() {
        eprintln!("size_of::<Item>() = {}", std::mem::size_of::<Item>());
        assert!(std::mem::size_of::<Item>() <= 112, "{}", std::mem::size_of::<Item>());
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
        assert!(!item.is_built_whole());
    }

    #[test]
    fn type_and_header_scans_build_nothing_and_compact_forgets_what_was_built() {
        let mut item = Item::from(json!({"apiVersion": "v1", "kind": "A", "metadata": {"name": "n"}, "spec": 1}));
        assert_eq!(item.type_of(), ("v1", "A"));
        assert!(item.header_contains("\"name\":\"n\""));
        assert!(!item.header_contains("spec"));
        assert!(!item.is_header_built() && !item.is_built_whole());
        crate::krm::set_annotation(item.header_mut(), "k", "v");
        item.header_mut()["kind"] = json!("B");
        assert_eq!(item.type_of(), ("v1", "B"));
        item.compact();
        assert!(!item.is_header_built());
        assert_eq!(item.type_of(), ("v1", "B"));
        assert!(item.header_contains("\"k\":\"v\""));
        item["spec"] = json!(2);
        item.compact();
        assert!(!item.is_built_whole());
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

/// What [`Item::identity`] reads: `metadata.name` and `namespace`, whether the item is
/// local-config (kustomize's reading: anything but `"false"`), and its path annotation.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Identity<'a> {
    pub name: std::borrow::Cow<'a, str>,
    pub namespace: std::borrow::Cow<'a, str>,
    pub local_config: bool,
    pub path: Option<std::borrow::Cow<'a, str>>,
}

/// The parts of a header's JSON that [`Identity`] needs; every other field is skipped unread.
#[derive(serde::Deserialize)]
struct HeaderView<'a> {
    #[serde(borrow)]
    metadata: Option<MetadataView<'a>>,
}

#[derive(serde::Deserialize, Default)]
struct MetadataView<'a> {
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    namespace: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    annotations: Option<AnnotationsView<'a>>,
}

#[derive(serde::Deserialize, Default)]
struct AnnotationsView<'a> {
    #[serde(borrow, rename = "config.kubernetes.io/local-config")]
    local_config: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, rename = "internal.config.kubernetes.io/path")]
    path: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, rename = "config.kubernetes.io/path")]
    legacy_path: Option<std::borrow::Cow<'a, str>>,
}
