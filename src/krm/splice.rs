//! Writes a changed item as its source text with only the changed nodes written anew.
//!
//! kpt writes a function's output back into the package, so every node a step did not change
//! should keep its quoting, flow or block style, number and null spelling, block scalar
//! indicators and comments, as kyaml-based functions keep them. The item's source is walked once
//! into a tree of nodes that know their place in the text and their value as read; the new value
//! is then written against it: a node whose value is unchanged is copied as written, a block
//! mapping or list that changed is written entry by entry (kept entries in place, new ones
//! emitted, removed ones dropped), a single-line scalar that changed is replaced in its line (a
//! comment after it stays), and anything else is emitted anew by the YAML writer at the node's
//! column.
//!
//! The tree is read from the line reader's events ([`super::block::read_events`]) where it
//! gives them, with the spans granit-parser gives (`krm::differential` compares the two trees on
//! every item), and from the parser's events otherwise.
//!
//! Written by hand: no Rust YAML crate keeps the source of a document it edits (the emitters
//! write values, granit-parser only reads). Whatever the tree does not model (anchors, aliases,
//! tags, explicit `?` keys, an element not on its dash's line, carriage returns, keys other
//! than plain text) returns `None`, and the caller emits the whole item from its value as
//! before.

use super::{rules, walk};
use crate::doc::{to_yaml, Map, Value};
use granit_parser::{Event, Parser, ScalarStyle, StructureStyle};
use std::borrow::Cow;

/// Deeper nesting is emitted whole.
const MAX_DEPTH: usize = 200;

/// Lists longer than this are matched by position only (matching by value is quadratic).
const MATCH_LIMIT: usize = 256;

/// A node of the source: where its text is and what it reads as.
#[derive(Debug, PartialEq)]
enum Node<'a> {
    /// `end` is where the scalar's text ends (a block scalar's takes its trailing line breaks);
    /// `text` is its content, read as [`rules::scalar_is`] reads it.
    Scalar {
        start: usize,
        end: usize,
        text: Cow<'a, str>,
        style: ScalarStyle,
    },
    /// A block mapping (`flow: false`) or a flow one (written again whole when it changed);
    /// `start` is where the node starts (a block one's first key or dash).
    Map {
        flow: bool,
        start: usize,
        end: usize,
        entries: Vec<Entry<'a>>,
    },
    List {
        flow: bool,
        start: usize,
        end: usize,
        items: Vec<Element<'a>>,
    },
}

#[derive(Debug, PartialEq)]
struct Entry<'a> {
    key: Cow<'a, str>,
    /// Where the key starts.
    start: usize,
    value: Node<'a>,
}

#[derive(Debug, PartialEq)]
struct Element<'a> {
    /// Where the element's dash is (block lists); the node's start in a flow list.
    dash: usize,
    value: Node<'a>,
}

impl Node<'_> {
    /// Where the node's last text ends.
    fn end(&self) -> usize {
        match self {
            Node::Scalar { end, .. } | Node::Map { end, .. } | Node::List { end, .. } => *end,
        }
    }
}

/// `source` (an item's YAML at column 0, a block mapping, ending with a line break) with `value`
/// written over it, or `None` when the source holds what the tree does not model or the result
/// would not read back as `value`.
pub fn write(source: &str, value: &Value) -> Option<String> {
    read(source)?.write(value)
}

/// Whether the line reader's tree of `source` is the parser's, where the line reader gives
/// one (tests); `None` when it gives none.
#[cfg(test)]
pub(super) fn trees_agree(source: &str) -> Option<Result<(), String>> {
    let events = super::block::read_events(source)?;
    let mut reader = Reader { events: Events::Lines(events.into_iter()), text: source };
    let lines = reader.node(1).filter(|_| reader.next().is_none());
    let parsed = parsed_tree(source);
    Some(if lines == parsed { Ok(()) } else { Err(format!("lines: {lines:?}\nparser: {parsed:?}")) })
}

/// An item's source read once: its value is built from the tree ([`Tree::value`]) and its
/// changes written over it ([`Tree::write`]), so a changed item's source is parsed once, not
/// once for its value and again for the splice.
pub struct Tree<'a> {
    source: &'a str,
    root: Node<'a>,
}

/// `source` (as [`write`] takes it) read into a tree; `None` for what the tree does not model.
pub fn read(source: &str) -> Option<Tree<'_>> {
    if source.contains('\r') || !source.ends_with('\n') {
        return None;
    }
    Some(Tree { source, root: read_tree(source)? })
}

impl Tree<'_> {
    /// The text the tree was read from.
    pub fn source(&self) -> &str {
        self.source
    }

    /// The value the source reads as, exactly as [`walk::read_item`] reads it (the same
    /// scalars, keys and depth limit; duplicate keys refused); `None` where that reader would
    /// leave the text to the full reader.
    pub fn value(&self) -> Option<Value> {
        fn build(node: &Node) -> Option<Value> {
            match node {
                Node::Scalar { text, style, .. } => rules::scalar(text.clone(), *style),
                Node::Map { entries, .. } => {
                    let mut map = Map::with_capacity(entries.len());
                    for entry in entries {
                        if map.insert(entry.key.to_string(), build(&entry.value)?).is_some() {
                            return None;
                        }
                    }
                    Some(Value::Object(map))
                }
                Node::List { items, .. } => items.iter().map(|item| build(&item.value)).collect(),
            }
        }
        build(&self.root)
    }

    /// The source with `value` written over it; see [`write`].
    pub fn write(&self, value: &Value) -> Option<String> {
        let source = self.source;
        let (Node::Map { flow: false, entries, .. }, Value::Object(map)) = (&self.root, value) else { return None };
        let first = entries.first()?;
        let mut out = Out { text: source, out: String::with_capacity(source.len() + source.len() / 8) };
        out.put(&source[..line_start(source, first.start)?]);
        out.map(map, entries, 0, source.len())?;
        let written = out.out;
        // Never write what reads otherwise: the text is checked against the value it stands for.
        walk::reads_as(&written, value).then_some(written)
    }
}

/// Reads `source` into a tree; `None` for what the tree does not model. The line reader
/// ([`super::block::read_events`]) gives the events of most items, the parser the rest.
fn read_tree(source: &str) -> Option<Node<'_>> {
    if let Some(events) = super::block::read_events(source) {
        let mut reader = Reader { events: Events::Lines(events.into_iter()), text: source };
        let root = reader.node(1)?;
        return reader.next().is_none().then_some(root);
    }
    parsed_tree(source)
}

/// [`read_tree`] on the parser's events alone.
fn parsed_tree(source: &str) -> Option<Node<'_>> {
    let mut reader = Reader { events: Events::Parser(Box::new(Parser::new_from_str(source))), text: source };
    reader.expect(|e| matches!(e, Event::StreamStart))?;
    reader.expect(|e| matches!(e, Event::DocumentStart(false, _)))?;
    let root = reader.node(1)?;
    reader.expect(|e| matches!(e, Event::DocumentEnd))?;
    reader.expect(|e| matches!(e, Event::StreamEnd))?;
    Some(root)
}

/// Where a tree's events come from.
enum Events<'a> {
    /// Boxed: the parser's state is 2.6 KB, the line reader's events a vector.
    Parser(Box<Parser<'a, granit_parser::StrInput<'a>>>),
    Lines(std::vec::IntoIter<super::block::Spanned<'a>>),
}

struct Reader<'a> {
    events: Events<'a>,
    text: &'a str,
}

impl<'a> Reader<'a> {
    /// The next event and its text's start and end; `None` at a syntax error.
    fn next(&mut self) -> Option<(Event<'a>, usize, usize)> {
        match &mut self.events {
            Events::Parser(parser) => {
                let (event, span) = parser.next()?.ok()?;
                let range = span.byte_range()?;
                // A tagged node starts at its tag.
                let start = span.tag_start().and_then(|tag| tag.byte_offset()).unwrap_or(range.start);
                Some((event, start.min(range.start), range.end))
            }
            Events::Lines(events) => events.next(),
        }
    }

    fn expect(&mut self, test: impl Fn(&Event<'a>) -> bool) -> Option<()> {
        let (event, ..) = self.next()?;
        test(&event).then_some(())
    }

    fn node(&mut self, depth: usize) -> Option<Node<'a>> {
        let (event, start, end) = self.next()?;
        self.node_from(event, start, end, depth)
    }

    fn node_from(&mut self, event: Event<'a>, start: usize, end: usize, depth: usize) -> Option<Node<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        match event {
            Event::Scalar(text, style, 0, tag) => {
                // `!!str` and `!!binary` scalars read as their text; the node starts at the tag,
                // so that a changed one is written without it.
                let style = rules::read_style(style, tag.as_deref())?;
                // A block scalar's text may end at the next line's indentation: it ends at the
                // start of that line.
                let line = self.text.get(..end)?.rfind('\n').map_or(0, |n| n + 1);
                let end = if self.text[line..end].bytes().all(|b| b == b' ') { line } else { end };
                Some(Node::Scalar { start, end, text, style })
            }
            Event::MappingStart(style, 0, None) => {
                let flow = style == StructureStyle::Flow;
                let mut entries: Vec<Entry<'a>> = Vec::new();
                loop {
                    let (event, key_start, key_end) = self.next()?;
                    let key = match event {
                        Event::MappingEnd if flow => break Some(Node::Map { flow, start, end: key_end, entries }),
                        Event::MappingEnd => {
                            let end = entries.last().map(|entry| entry.value.end())?;
                            break Some(Node::Map { flow, start, end, entries });
                        }
                        Event::Scalar(key, style, 0, None) if rules::plain_text_key(&key, style) => key,
                        _ => return None,
                    };
                    // An implicit key, its colon right after it (no `? key`).
                    if !flow && !self.text.get(key_end..)?.trim_start_matches(' ').starts_with(':') {
                        return None;
                    }
                    let value = self.node(depth + 1)?;
                    entries.push(Entry { key, start: key_start, value });
                }
            }
            Event::SequenceStart(style, 0, None) => {
                let flow = style == StructureStyle::Flow;
                let mut items = Vec::new();
                loop {
                    let (event, at, at_end) = self.next()?;
                    if let Event::SequenceEnd = event {
                        let end = if flow { at_end } else { items.last().map(|item: &Element| item.value.end())? };
                        break Some(Node::List { flow, start, end, items });
                    }
                    let dash = match &event {
                        _ if flow => at,
                        // A block scalar's text starts on the line after its indicator.
                        Event::Scalar(_, ScalarStyle::Literal | ScalarStyle::Folded, ..) => {
                            dash_before(self.text, self.text.get(..at)?.rfind(['|', '>'])?)?
                        }
                        _ => dash_before(self.text, at)?,
                    };
                    let value = self.node_from(event, at, at_end, depth + 1)?;
                    items.push(Element { dash, value });
                }
            }
            _ => None,
        }
    }
}

/// The dash of a block list element starting at `at`, on the same line with only spaces or tabs
/// between.
fn dash_before(text: &str, at: usize) -> Option<usize> {
    // YAML takes tabs as well as spaces between a list's dash and its element (`-\tx`).
    let before = text.get(..at)?.trim_end_matches([' ', '\t']);
    before.ends_with('-').then(|| before.len() - 1)
}

/// Where the line holding `at` starts, when only spaces and dashes (block list indicators) come
/// before `at` on it; `None` otherwise.
fn line_start(text: &str, at: usize) -> Option<usize> {
    let before = text.get(..at)?;
    let start = before.rfind('\n').map_or(0, |n| n + 1);
    before[start..].bytes().all(|b| b == b' ' || b == b'-').then_some(start)
}

/// Where a chunk starting at `at` starts: its line's start when only spaces come before it, or
/// `at` itself (a node right after its list's dash).
fn chunk_start(text: &str, at: usize) -> usize {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    if text[start..at].bytes().all(|b| b == b' ') {
        start
    } else {
        at
    }
}

/// The end of the line holding the text that ends at `end` (after its line break), or `end` when
/// that text ended with its line break.
fn line_end(text: &str, end: usize) -> usize {
    if end == 0 || text.as_bytes().get(end - 1) == Some(&b'\n') {
        return end;
    }
    text[end..].find('\n').map_or(text.len(), |n| end + n + 1)
}

/// The column of `at` (bytes since its line's start: only spaces and dashes come before it).
fn column(text: &str, at: usize) -> usize {
    at - text[..at].rfind('\n').map_or(0, |n| n + 1)
}

/// Whether a node reads as `value`, keys in the same order.
fn same(value: &Value, node: &Node) -> bool {
    match (value, node) {
        (value, Node::Scalar { text, style, .. }) => rules::scalar_is(text, *style, value),
        (Value::Object(map), Node::Map { entries, .. }) => {
            map.len() == entries.len()
                && map.iter().zip(entries).all(|((key, value), entry)| *key == entry.key && same(value, &entry.value))
        }
        (Value::Array(list), Node::List { items, .. }) => {
            list.len() == items.len() && list.iter().zip(items).all(|(value, item)| same(value, &item.value))
        }
        _ => false,
    }
}

struct Out<'a> {
    text: &'a str,
    out: String,
}

impl Out<'_> {
    fn at_line_start(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n')
    }

    /// Appends `chunk`, whose first line starts at its line's start: after a dash its first
    /// line's indentation goes (the dash stands in for it).
    fn put(&mut self, chunk: &str) {
        if self.at_line_start() {
            self.out.push_str(chunk);
        } else {
            self.out.push_str(chunk.trim_start_matches(' '));
        }
    }

    /// Appends the source from `start` to `end`, a chunk starting at its line's start or right
    /// after a dash at `column` spaces less one: at a line's start it is indented to `column`.
    fn copy(&mut self, start: usize, end: usize, column: usize) {
        let chunk = &self.text[start..end];
        let mid_line = start > 0 && self.text.as_bytes()[start - 1] != b'\n';
        if mid_line && self.at_line_start() {
            self.out.extend(std::iter::repeat_n(' ', column));
            self.out.push_str(chunk);
        } else {
            self.put(chunk);
        }
    }

    /// Appends text from the YAML writer, its lines moved `column` spaces right.
    fn emitted(&mut self, text: &str, column: usize) {
        for (i, line) in text.lines().enumerate() {
            if !line.is_empty() && (i > 0 || self.at_line_start()) {
                self.out.extend(std::iter::repeat_n(' ', column));
            }
            self.out.push_str(line);
            self.out.push('\n');
        }
    }

    /// A block mapping at `column` written as `map`, over its source `entries`; the source's
    /// text up to `end` after the last entry (comments) follows.
    fn map(&mut self, map: &Map, entries: &[Entry], column: usize, end: usize) -> Option<()> {
        // Large mappings (a ConfigMap's data) look keys up by hash.
        let index: Option<std::collections::HashMap<&str, usize>> =
            (entries.len() > 16).then(|| entries.iter().enumerate().map(|(i, entry)| (&*entry.key, i)).collect());
        let find = |key: &str| match &index {
            Some(index) => index.get(key).copied(),
            None => entries.iter().position(|entry| entry.key == key),
        };
        let ends: Vec<usize> = entries.iter().map(|entry| entry.value.end()).collect();
        for (key, value) in map {
            let kept = match find(key) {
                Some(at) => self.kept(&ends, at, entries[at].start, &entries[at].value, value, column)?,
                None => false,
            };
            if !kept {
                let mut one = Map::new();
                one.insert(key.clone(), value.clone());
                self.emitted(&to_yaml(&Value::Object(one)), column);
            }
        }
        self.tail(ends.last().copied(), end);
        Some(())
    }

    /// A block list whose dashes are at `column` written as `list`, over its source `items`
    /// (paired by [`pair`]); an element without a partner is emitted anew.
    fn list(&mut self, list: &[Value], items: &[Element], column: usize, end: usize) -> Option<()> {
        let ends: Vec<usize> = items.iter().map(|item| item.value.end()).collect();
        for (value, partner) in list.iter().zip(pair(list, items)) {
            let kept = match partner {
                Some(at) => self.kept(&ends, at, items[at].dash, &items[at].value, value, column)?,
                None => false,
            };
            if !kept {
                self.emitted(&to_yaml(&Value::Array(vec![value.clone()])), column);
            }
        }
        self.tail(ends.last().copied(), end);
        Some(())
    }

    /// The source's text after the last entry or element (ending at `last`) up to `end`.
    fn tail(&mut self, last: Option<usize>, end: usize) {
        if let Some(last) = last {
            let tail = line_end(self.text, last);
            if tail < end {
                self.put(&self.text[tail..end]);
            }
        }
    }

    /// Writes the `at`th entry or element of a block collection (whose nodes end at `ends`), its
    /// key or dash at `start`, as `value`: the lines before it, then its text as written when
    /// unchanged, else with the changes written in place. `Some(false)`: it must be written
    /// anew; `None`: the source is not as the tree expects.
    fn kept(
        &mut self,
        ends: &[usize],
        at: usize,
        start: usize,
        node: &Node,
        value: &Value,
        column: usize,
    ) -> Option<bool> {
        let text = self.text;
        let start = chunk_start(text, start);
        let stop = line_end(text, node.end());
        let unchanged = same(value, node);
        let mut changed = String::new();
        let in_place = match (node, value) {
            _ if unchanged => true,
            (Node::Map { flow: false, entries, .. }, Value::Object(new)) if !new.is_empty() => true,
            (Node::List { flow: false, items, .. }, Value::Array(new)) if !new.is_empty() => true,
            (Node::Scalar { start: from, end: to, style, .. }, value) if one_line(text, *from, *to) => {
                inline(value, *style).map(|scalar| changed = scalar).is_some()
            }
            (Node::Map { flow: true, .. } | Node::List { flow: true, .. }, value) => {
                flow(value, node, text).map(|written| changed = written).is_some()
            }
            _ => false,
        };
        if !in_place {
            return Some(false);
        }
        if at > 0 {
            // The lines between the one before and this one (comments, blank lines).
            let lead = line_end(text, ends[at - 1]);
            if lead < start {
                self.put(&text[lead..start]);
            }
        }
        match (node, value) {
            _ if unchanged => self.copy(start, stop, column),
            (Node::Map { flow: false, entries, .. }, Value::Object(new)) => {
                let first = entries.first()?.start;
                self.copy(start, chunk_start(text, first), column);
                self.map(new, entries, column_of(text, first)?, stop)?;
            }
            (Node::List { flow: false, items, .. }, Value::Array(new)) => {
                let first = items.first()?.dash;
                self.copy(start, chunk_start(text, first), column);
                self.list(new, items, column_of(text, first)?, stop)?;
            }
            (
                Node::Scalar { start: from, end: to, .. }
                | Node::Map { start: from, end: to, .. }
                | Node::List { start: from, end: to, .. },
                _,
            ) => {
                self.copy(start, *from, column);
                self.out.push_str(&changed);
                self.out.push_str(&text[*to..stop]);
            }
        }
        Some(true)
    }
}

/// A flow collection written as `value` in flow style on one line: its entries or elements that
/// did not change as written, the others (scalars only) as the writer spells them, quoted where
/// a flow indicator would end them. `None` when a changed one is not a scalar.
fn flow(value: &Value, node: &Node, text: &str) -> Option<String> {
    let scalar = |value: &Value| -> Option<String> {
        let written = inline(value, ScalarStyle::Plain)?;
        match value {
            Value::String(s) if written.contains([',', '[', ']', '{', '}', '#']) => serde_json::to_string(s).ok(),
            _ => Some(written),
        }
    };
    let mut parts = Vec::new();
    match (value, node) {
        (Value::Object(map), Node::Map { entries, .. }) => {
            for (key, value) in map {
                match entries.iter().find(|entry| entry.key == *key) {
                    Some(entry) if same(value, &entry.value) => {
                        parts.push(text.get(entry.start..entry.value.end())?.to_string())
                    }
                    _ => parts.push(format!("{}: {}", scalar(&Value::String(key.clone()))?, scalar(value)?)),
                }
            }
            Some(format!("{{{}}}", parts.join(", ")))
        }
        (Value::Array(list), Node::List { items, .. }) => {
            for (value, partner) in list.iter().zip(pair(list, items)) {
                match partner.map(|at| &items[at]) {
                    Some(item) if same(value, &item.value) => {
                        parts.push(text.get(item.dash..item.value.end())?.to_string())
                    }
                    _ => parts.push(scalar(value)?),
                }
            }
            Some(format!("[{}]", parts.join(", ")))
        }
        _ => None,
    }
}

/// Whether a scalar's text is on one line right after its key's colon or its dash (not a block
/// scalar, whose text starts on the next line, nor an empty one).
fn one_line(text: &str, start: usize, end: usize) -> bool {
    start < end && !text[start..end].contains('\n') && text[..start].trim_end_matches(' ').ends_with([':', '-'])
}

/// The column of a key or dash at `at`, when only spaces and dashes come before it on its line.
fn column_of(text: &str, at: usize) -> Option<usize> {
    line_start(text, at).map(|_| column(text, at))
}

/// Which source element each new element is written over (see [`Out::list`]): one equal to it,
/// else a mapping whose first entry is the same (`name: web`: the element a merge patch
/// changed, wherever it moved), else a mapping or list at the same position, else none (written
/// anew). Past [`MATCH_LIMIT`] elements (the search is quadratic), elements pair by position.
fn pair(list: &[Value], items: &[Element]) -> Vec<Option<usize>> {
    if list.len().saturating_mul(items.len()) > MATCH_LIMIT * MATCH_LIMIT {
        return (0..list.len()).map(|i| (i < items.len()).then_some(i)).collect();
    }
    let mut used = vec![false; items.len()];
    let mut pairs = vec![None; list.len()];
    for test in [same, same_first_entry] {
        for (value, partner) in list.iter().zip(pairs.iter_mut()) {
            if partner.is_some() {
                continue;
            }
            if let Some(found) = (0..items.len()).find(|&i| !used[i] && test(value, &items[i].value)) {
                used[found] = true;
                *partner = Some(found);
            }
        }
    }
    // What is left: a mapping or list over the one at its own position, if that is left too (a
    // JSON patch's `/rules/0/verbs/-` changes an element in place whose first entry is a list).
    for (i, (value, partner)) in list.iter().zip(pairs.iter_mut()).enumerate() {
        let same_kind = |node: &Node| {
            matches!((value, node), (Value::Object(_), Node::Map { .. }) | (Value::Array(_), Node::List { .. }))
        };
        if partner.is_none() && i < items.len() && !used[i] && same_kind(&items[i].value) {
            used[i] = true;
            *partner = Some(i);
        }
    }
    pairs
}

/// Whether a mapping's first entry, a scalar, is the node's first entry.
fn same_first_entry(value: &Value, node: &Node) -> bool {
    let (Value::Object(map), Node::Map { entries, .. }) = (value, node) else { return false };
    match (map.iter().next(), entries.first()) {
        (Some((key, value)), Some(entry)) => {
            *key == entry.key && !value.is_object() && !value.is_array() && same(value, &entry.value)
        }
        _ => false,
    }
}

/// A scalar value as written in place of a scalar written in `style`, when that is one line: a
/// string in the quotes the old one had (as a substitution in the text would keep them), else
/// as the writer spells it after a key.
fn inline(value: &Value, style: ScalarStyle) -> Option<String> {
    match (value, style) {
        (Value::Object(_) | Value::Array(_), _) => return None,
        // JSON's string syntax is YAML's double-quoted one.
        (Value::String(text), ScalarStyle::DoubleQuoted) => return serde_json::to_string(text).ok(),
        (Value::String(text), ScalarStyle::SingleQuoted) if !text.contains(|c: char| c.is_control()) => {
            return Some(format!("'{}'", text.replace('\'', "''")));
        }
        _ => {}
    }
    let mut one = Map::new();
    one.insert("k".into(), value.clone());
    let text = to_yaml(&Value::Object(one));
    let scalar = text.strip_prefix("k: ")?.strip_suffix('\n')?;
    (!scalar.contains('\n') && !scalar.is_empty()).then(|| scalar.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::krm::differential::generate::{fixture_texts, Rng};
    use crate::krm::differential::on_a_big_stack;
    use serde_json::json;

    fn spliced(source: &str, change: impl FnOnce(&mut Value)) -> Option<String> {
        let mut value = walk::read_item(source)?;
        change(&mut value);
        write(source, &value)
    }

    #[test]
    fn unchanged_nodes_keep_their_text() {
        let source = "\
apiVersion: v1
kind: ConfigMap # the kind
metadata:
  name: 'x'
  labels: {app: web}
data:
  mode: 0644
  big: 1.50
  hex: 0x1F
  text: |
    line
";
        let out = spliced(source, |v| v["metadata"]["name"] = json!("web-2"));
        assert_eq!(out.as_deref(), Some(source.replace("name: 'x'", "name: 'web-2'").as_str()));
    }

    #[test]
    fn a_changed_scalar_keeps_the_comment_after_it_and_strings_stay_strings() {
        let source = "a: 1 # one\nb: x\n";
        let out = spliced(source, |v| {
            v["a"] = json!(2);
            v["b"] = json!("on");
        });
        assert_eq!(out.as_deref(), Some("a: 2 # one\nb: \"on\"\n"));
    }

    #[test]
    fn keys_are_added_and_removed_in_place() {
        let source = "\
metadata:
  name: web
  # the labels
  labels:
    app: web
spec:
  replicas: 1
";
        let out = spliced(source, |v| {
            v["metadata"]["labels"]["tier"] = json!("front");
            v["metadata"]["annotations"] = json!({"a": "b"});
            v["spec"].as_object_mut().map(|spec| spec.shift_remove("replicas"));
            v["spec"]["paused"] = json!(true);
        });
        let want = "\
metadata:
  name: web
  # the labels
  labels:
    app: web
    tier: front
  annotations:
    a: b
spec:
  paused: true
";
        assert_eq!(out.as_deref(), Some(want));
    }

    #[test]
    fn list_elements_are_kept_by_position_or_by_value() {
        let source = "\
containers:
- name: main # the app
  image: 'nginx:1'
  env:
  - {name: A, value: '1'}
  - name: B
    value: \"2\"
- name: side
  image: busybox
";
        let out = spliced(source, |v| {
            v["containers"][0]["image"] = json!("nginx:2");
            if let Some(env) = v["containers"][0]["env"].as_array_mut() {
                env.push(json!({"name": "C", "value": "3"}));
            }
            v["containers"][1]["image"] = json!("busybox:1");
        });
        let want = "\
containers:
- name: main # the app
  image: 'nginx:2'
  env:
  - {name: A, value: '1'}
  - name: B
    value: \"2\"
  - name: C
    value: \"3\"
- name: side
  image: busybox:1
";
        assert_eq!(out.as_deref(), Some(want));
        let out = spliced(source, |v| {
            v["containers"].as_array_mut().map(|list| list.remove(0));
        });
        assert_eq!(out.as_deref(), Some("containers:\n- name: side\n  image: busybox\n"));
    }

    #[test]
    fn a_first_key_removed_after_a_dash_leaves_the_next_in_its_place() {
        let source = "list:\n  - a: 1\n    b: 2\n  - a: 3\n";
        let out = spliced(source, |v| {
            v["list"][0].as_object_mut().map(|m| m.shift_remove("a"));
            v["list"][1]["z"] = json!(0);
        });
        assert_eq!(out.as_deref(), Some("list:\n  - b: 2\n  - a: 3\n    z: 0\n"));
        let out = spliced(source, |v| {
            if let Some(first) = v["list"][0].as_object_mut() {
                let old = std::mem::take(first);
                first.insert("new".into(), json!("x"));
                first.extend(old);
            }
        });
        assert_eq!(out.as_deref(), Some("list:\n  - new: x\n    a: 1\n    b: 2\n  - a: 3\n"));
    }

    #[test]
    fn changed_flow_collections_stay_flow_and_block_scalars_are_written_anew() {
        let source = "a: {x: 1, 'y': \"2\"}\nb: |\n  text\nc: [1, 2]\nd: [x]\n";
        let out = spliced(source, |v| {
            v["a"]["z"] = json!("p, q");
            v["b"] = json!("other\ntext\n");
            v["c"] = json!([2, "on"]);
            v["d"] = json!([{"k": "v"}]);
        });
        let want = "a: {x: 1, 'y': \"2\", z: \"p, q\"}\nb: |\n  other\n  text\nc: [2, \"on\"]\nd:\n- k: v\n";
        assert_eq!(out.as_deref(), Some(want));
    }

    #[test]
    fn text_tags_are_kept_where_their_node_is_unchanged() {
        let source =
            "data:\n  key: !!binary aGVsbG8=  # base64\n  raw: !!binary /w==\n  s: !!str 1\n  l:\n  - !!str 2\n";
        let out = spliced(source, |v| {
            v["data"]["new"] = json!("x");
            v["data"]["raw"] = json!("changed");
        });
        let want =
            "data:\n  key: !!binary aGVsbG8=  # base64\n  raw: 'changed'\n  s: !!str 1\n  l:\n  - !!str 2\n  new: x\n";
        assert_eq!(out.as_deref(), Some(want));
    }

    #[test]
    fn what_the_tree_does_not_model_is_left_to_the_writer() {
        for source in ["a: &x 1\nb: *x\n", "a: !custom 1\n", "? a\n: 1\n", "a:\r\n  b: 1\r\n", "l:\n-\n  a: 1\n"] {
            assert_eq!(write(source, &json!({"a": 2})), None, "{source:?}");
        }
    }

    /// One random change somewhere in `value`.
    fn mutate(value: &mut Value, rng: &mut Rng) {
        const SCALARS: [&str; 8] = ["x", "on", "0644", "1e3", "a: b", "two\nlines\n", "", "- item"];
        let scalar = |rng: &mut Rng| match rng.below(4) {
            0 => json!(SCALARS[rng.below(SCALARS.len())]),
            1 => json!(rng.below(1000)),
            2 => json!(rng.below(2) == 0),
            _ => json!({"k": SCALARS[rng.below(SCALARS.len())]}),
        };
        let mut node = value;
        // Down a random path, stopping at random.
        loop {
            let len = match &*node {
                Value::Object(map) => map.len(),
                Value::Array(list) => list.len(),
                _ => 0,
            };
            if len == 0 || rng.below(3) == 0 {
                break;
            }
            let at = rng.below(len);
            let next = match node {
                Value::Object(map) => match map.keys().nth(at).cloned() {
                    Some(key) => map.get_mut(&key),
                    None => None,
                },
                Value::Array(list) => list.get_mut(at),
                _ => None,
            };
            match next {
                Some(next) if next.is_object() || next.is_array() => node = next,
                Some(next) => {
                    *next = scalar(rng);
                    return;
                }
                None => return,
            }
        }
        match node {
            Value::Object(map) => match rng.below(3) {
                0 if !map.is_empty() => {
                    let key = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
                    map.shift_remove(&key);
                }
                1 => {
                    // A new key somewhere: the keys after it move behind it.
                    let at = rng.below(map.len() + 1);
                    let rest: Vec<String> = map.keys().skip(at).cloned().collect();
                    let moved: Vec<(String, Value)> =
                        rest.into_iter().filter_map(|key| map.shift_remove_entry(&key)).collect();
                    map.insert(format!("new{}", rng.below(100)), scalar(rng));
                    map.extend(moved);
                }
                _ => {
                    let reversed: Vec<(String, Value)> = std::mem::take(map).into_iter().rev().collect();
                    map.extend(reversed);
                }
            },
            Value::Array(list) => match rng.below(3) {
                0 if !list.is_empty() => {
                    list.remove(rng.below(list.len()));
                }
                1 => list.insert(rng.below(list.len() + 1), scalar(rng)),
                _ => list.reverse(),
            },
            other => *other = scalar(rng),
        }
    }

    /// A tree's value is the lazy reader's, keys in the same order, for every item of every
    /// fixture and for each laid out anew (comments, tabs, quoted keys, anchors, tags…); where
    /// the tree gives none, the item is built by that reader as before.
    #[test]
    fn tree_values_are_the_lazy_readers() {
        on_a_big_stack(check_tree_values);
    }

    /// Every fixture input's items, read by the list reader: the input's path, the item, and
    /// its source.
    fn fixture_items() -> Vec<(std::path::PathBuf, super::super::Item, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let inputs = fixture_texts(&root).into_iter().filter(|(path, _)| path.ends_with("input.yaml"));
        let mut items = Vec::new();
        for (input, text) in inputs {
            let Ok(list) = super::super::ResourceList::parse(text.as_bytes()) else { continue };
            for item in list.items {
                if let Some(source) = item.source_text() {
                    items.push((input.clone(), item, source));
                }
            }
        }
        items
    }

    fn check_tree_values() {
        use crate::krm::differential::generate::perturb_item;
        let mut rng = Rng(25);
        let (mut same, mut left) = (0, 0);
        let json = |value: &Value| serde_json::to_string(value).unwrap_or_default();
        for (input, _, source) in fixture_items() {
            for n in 0..6 {
                let text = if n == 0 { source.clone() } else { perturb_item(&mut rng, &source, n, n > 3) };
                let read = walk::read_item(&text);
                match read_tree(&text).and_then(|root| Tree { source: &text, root }.value()) {
                    Some(value) => {
                        same += 1;
                        assert_eq!(read.as_ref().map(json), Some(json(&value)), "{}:\n{text}", input.display());
                    }
                    None => left += usize::from(read.is_some()),
                }
            }
        }
        // Most items the lazy reader reads, the tree reads too.
        assert!(same > 4 * left, "{same} read by the tree, {left} left to the lazy reader");
    }

    /// Every item of every fixture, changed at random a few thousand times: whatever the
    /// writer returns reads, by the full reader, as the changed value.
    #[test]
    fn changed_fixture_items_read_back_as_changed() {
        on_a_big_stack(check_changed_fixture_items);
    }

    fn check_changed_fixture_items() {
        let mut rng = Rng(19);
        let (mut spliced, mut whole) = (0, 0);
        for (input, item, source) in fixture_items() {
            for _ in 0..8 {
                let mut value = (*item).clone();
                for _ in 0..=rng.below(3) {
                    mutate(&mut value, &mut rng);
                }
                match write(&source, &value) {
                    Some(text) => {
                        spliced += 1;
                        let read = crate::doc::read_yaml_documents(&text);
                        assert_eq!(read.ok(), Some(vec![value]), "{}:\n{source}\n---\n{text}", input.display());
                    }
                    None => whole += 1,
                }
            }
        }
        // Most changes are written in place; the rest (anchors, tags…) whole.
        assert!(spliced > 4 * whole, "{spliced} spliced, {whole} written whole");
    }
}
