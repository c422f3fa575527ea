//! A line reader for the block YAML that manifests are almost always written in: block mappings
//! and lists, plain and quoted scalars on one line, literal and folded block scalars, `{}` and
//! `[]`, comments and blank lines. For each item of a list it proves what the walk over the
//! parser's events in [`super::scan`] proves (the item reads without error, to the value the full
//! reader gives: no tags, anchors, aliases or merge keys, keys that are plain text, no duplicate
//! keys, no non-finite numbers, bounded depth) and builds the same header. At the first line it
//! does not take (a flow collection, a scalar over several lines, a tab, a character YAML treats
//! specially, anything invalid) it stops, and the event walk reads the rest of the list from that
//! item on, so what it takes is always a subset of what the walk takes.
//!
//! Written by hand: the parser (granit-parser) spends most of its time building and moving
//! events (a 256-byte value per event), about 14 ms for half a megabyte; no crate offers a
//! recognizer for a subset of YAML that falls back to a full parser. This one reads the same
//! lines several times faster, and `krm::differential` checks it against the walk.

use super::cut::{cut_last, starts_with_marker, Spot};
use super::head::{Head, HEADER};
use super::rules::{finite, plain_text_key, scalar, KeySet, MAX_DEPTH};
use crate::doc::{Map, Value};
use granit_parser::{Event, ScalarStyle, StructureStyle};
use std::borrow::Cow;

/// Where a list read by [`items`] stopped.
#[derive(Debug, PartialEq)]
pub(super) enum Stop {
    /// At the end of the list: at the line of the key that follows it, or (`None`) at the end of
    /// the text.
    End(Option<usize>),
    /// At the dash line of an item this reader does not take; the items before it were read.
    At(usize),
}

/// The items read from a list part: places, headers, whether one could not be cut out, and
/// where the reading stopped.
pub(super) struct Read {
    pub(super) spots: Vec<Spot>,
    pub(super) headers: Vec<Head>,
    pub(super) cut_failed: bool,
    pub(super) stop: Stop,
}

/// Reads the items of a block list whose dashes are at `dash` spaces of indentation, from the
/// start of `text` (a dash line at that indentation) on. Places are offsets in `text`; every item
/// but the last is cut out of it.
pub(super) fn items(text: &str, dash: usize) -> Read {
    let mut reader = Reader::new(text);
    let mut read = Read { spots: Vec::new(), headers: Vec::new(), cut_failed: false, stop: Stop::End(None) };
    loop {
        let line = reader.pos;
        let Some((start, column, head)) = reader.item(dash) else {
            read.stop = Stop::At(line);
            return read;
        };
        // What follows must be the next item, the end of the list (a key at column 0), or the
        // end of the text.
        let next = match reader.indent() {
            None => Stop::End(None),
            Some(indent) if indent == dash && reader.dash_at(reader.pos + indent) => Stop::At(reader.pos),
            // A key the reader takes (the keys after the list are read again by the walk).
            Some(0) if matches!(reader.key(reader.pos), Some(Some(_))) => Stop::End(Some(reader.pos)),
            Some(_) => {
                read.stop = Stop::At(line);
                return read;
            }
        };
        let Some(spot) = Spot::new(start, column) else {
            read.stop = Stop::At(line);
            return read;
        };
        read.cut_failed |= !cut_last(text, &mut read.spots, start);
        read.spots.push(spot);
        read.headers.push(head);
        if let Stop::End(_) = next {
            read.stop = next;
            return read;
        }
    }
}

/// Where a block list's first item is, when the list starts on the line after `after` (a key's
/// colon, the rest of its line spaces and a comment or nothing), past blank and comment lines:
/// its dash's indentation and its line's start.
pub(super) fn first_item(text: &str, after: usize) -> Option<(usize, usize)> {
    let mut reader = Reader::new(text);
    reader.pos = reader.finish_line(after)?;
    reader.skip_blank()?;
    let indent = reader.indent()?;
    reader.dash_at(reader.pos + indent).then_some((indent, reader.pos))
}

/// The value of one YAML document, an item standing alone: a block mapping at column 0 whose
/// lines this reader takes, built as the walk over the parser's events builds it; `None` for
/// anything else.
pub(super) fn read_document(text: &str) -> Option<Value> {
    let mut reader = Reader::new(text);
    reader.skip_blank()?;
    if reader.indent()? != 0 {
        return None;
    }
    let value = reader.map(0, reader.pos, 1, Mode::Build)??;
    reader.indent().is_none().then_some(value)
}

/// The events granit-parser gives for one document, an item standing alone (see
/// [`read_document`]), with the spans [`super::splice`] reads: where nodes and keys start, where
/// scalars and flow collections end. `None` where [`read_document`] stops, and for the few
/// layouts whose spans it does not reproduce (a null in a list, a null with a comment, a block
/// scalar with leading blank lines or followed by a comment line, a folded one).
pub(super) fn read_events(text: &str) -> Option<Vec<Spanned<'_>>> {
    let mut reader = Reader::new(text);
    reader.events = Some(Vec::new());
    reader.skip_blank()?;
    if reader.indent()? != 0 {
        return None;
    }
    reader.map(0, reader.pos, 1, Mode::Check)?;
    if reader.indent().is_some() {
        return None;
    }
    reader.events
}

/// A key read by [`Reader::key`]: its text, the offset after its colon, where its text ends
/// and its style.
struct Key<'a> {
    text: Cow<'a, str>,
    after: usize,
    end: usize,
    style: ScalarStyle,
}

/// What to make of a node.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Its value, as the full reader reads it.
    Build,
    /// Only the proof that it reads.
    Check,
    /// An item: its header's fields built, the rest checked.
    Item,
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// The start of the next line to read.
    pos: usize,
    /// The parser's events with their spans, when asked for ([`read_events`]).
    events: Option<Vec<Spanned<'a>>>,
}

/// An event and the start and end of its text, as granit-parser gives them.
pub(super) type Spanned<'a> = (Event<'a>, usize, usize);

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader { text, bytes: text.as_bytes(), pos: 0, events: None }
    }

    fn emit(&mut self, event: Event<'a>, start: usize, end: usize) {
        if let Some(events) = &mut self.events {
            events.push((event, start, end));
        }
    }

    fn tree(&self) -> bool {
        self.events.is_some()
    }

    /// Emits a scalar's event (its text copied only when events are kept). A `Cow`, not a
    /// `&str`: a text borrowed from the input stays borrowed in the event.
    #[allow(clippy::ptr_arg)]
    fn emit_scalar(&mut self, text: &Cow<'a, str>, style: ScalarStyle, start: usize, end: usize) {
        if self.tree() {
            self.emit(Event::Scalar(text.clone(), style, 0, None), start, end);
        }
    }

    /// One item at the dash line at `pos`: where its mapping starts, its column (1-based) and
    /// its header; `pos` moves to the next line that holds content.
    fn item(&mut self, dash: usize) -> Option<(usize, usize, Head)> {
        let line = self.pos;
        if !self.bytes.get(line..line + dash)?.iter().all(|&b| b == b' ') || !self.dash_at(line + dash) {
            return None;
        }
        let at = self.spaces(line + dash + 1);
        let start = match self.bytes.get(at) {
            // The mapping starts on a line of its own.
            None | Some(b'\n' | b'#') => {
                self.past_line(at)?;
                let indent = self.indent()?;
                if indent <= dash {
                    return None;
                }
                self.pos + indent
            }
            Some(_) => at,
        };
        let column = start - self.line_start(start);
        let Some(Value::Object(fields)) = self.map(column, start, 1, Mode::Item)? else { return None };
        Some((start, column + 1, Head::from(&fields)))
    }

    /// A block mapping at `indent` whose first key starts at `at`; its value when building (the
    /// header's fields in their order for an item).
    fn map(&mut self, indent: usize, mut at: usize, depth: usize, mode: Mode) -> Option<Option<Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut keys = KeySet::default();
        let mut map = Map::new();
        let mut header: [Option<Value>; 3] = Default::default();
        self.emit(Event::MappingStart(StructureStyle::Block, 0, None), at, at);
        loop {
            let Key { text: key, after, end, style } = self.key(at)??;
            if !keys.insert(key.clone()) {
                return None;
            }
            self.emit_scalar(&key, style, at, end);
            let field = (mode == Mode::Item).then(|| HEADER.iter().position(|name| *name == key)).flatten();
            let value_mode = match (mode, field) {
                (Mode::Build, _) | (Mode::Item, Some(_)) => Mode::Build,
                _ => Mode::Check,
            };
            let value = self.value(after, indent, true, depth + 1, value_mode)?;
            match (mode, field, value) {
                (Mode::Build, _, Some(value)) => {
                    map.insert(key.into_owned(), value);
                }
                (Mode::Item, Some(n), Some(value)) => header[n] = Some(value),
                (_, _, None) if value_mode == Mode::Build => return None,
                _ => {}
            }
            match self.indent() {
                Some(next) if next == indent => at = self.pos + next,
                Some(next) if next < indent => break,
                None => break,
                Some(_) => return None,
            }
        }
        self.emit(Event::MappingEnd, self.pos, self.pos);
        Some(match mode {
            Mode::Build => Some(Value::Object(map)),
            Mode::Check => None,
            Mode::Item => {
                Some(Value::Object(HEADER.iter().zip(header).filter_map(|(k, v)| Some((k.to_string(), v?))).collect()))
            }
        })
    }

    /// A block list at `indent` whose first dash is on the line at `pos`.
    /// `at_key`: the list sits at its key's own indentation (the parser then places the list's
    /// start at its first entry, not at its first dash).
    fn list(&mut self, indent: usize, depth: usize, mode: Mode, at_key: bool) -> Option<Option<Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut list = Vec::new();
        let first_dash = self.pos + indent;
        self.emit(Event::SequenceStart(StructureStyle::Block, 0, None), first_dash, first_dash);
        let start_event = self.events.as_ref().map_or(0, Vec::len);
        loop {
            let after = self.pos + indent + 1;
            let at = self.spaces(after);
            let entry = match self.bytes.get(at) {
                // A null entry's span is not reproduced.
                None | Some(b'\n' | b'#') if self.tree() => return None,
                None | Some(b'\n' | b'#') => self.value(after, indent, false, depth + 1, mode)?,
                // A list in a list on one line, or text right after the dash.
                Some(b'-') if self.dash_at(at) => return None,
                Some(_) => match self.key(at)? {
                    Some(_) => self.map(at - self.pos, at, depth + 1, mode)?,
                    None => self.value(after, indent, false, depth + 1, mode)?,
                },
            };
            if mode == Mode::Build {
                list.push(entry?);
            }
            match self.indent() {
                Some(next) if next == indent && self.dash_at(self.pos + next) => {}
                Some(next) if next <= indent => break,
                None => break,
                Some(_) => return None,
            }
        }
        if let Some(events) = &mut self.events {
            if at_key {
                let first = events.get(start_event)?.1;
                let start = events.get_mut(start_event - 1)?;
                (start.1, start.2) = (first, first);
            }
        }
        self.emit(Event::SequenceEnd, self.pos, self.pos);
        Some((mode == Mode::Build).then_some(Value::Array(list)))
    }

    /// The node after a key's colon or a dash (at `after`), in a collection at `indent`; `pos`
    /// moves to the next line with content.
    fn value(&mut self, after: usize, indent: usize, in_map: bool, depth: usize, mode: Mode) -> Option<Option<Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let at = self.spaces(after);
        match self.bytes.get(at) {
            None | Some(b'\n' | b'#') => {
                self.past_line(at)?;
                match self.indent() {
                    Some(next) if next > indent => {
                        let start = self.pos + next;
                        if self.dash_at(start) {
                            self.list(next, depth, mode, false)
                        } else {
                            self.map(next, start, depth, mode)
                        }
                    }
                    // A list may sit at its key's own indentation.
                    Some(next) if next == indent && in_map && self.dash_at(self.pos + next) => {
                        self.list(next, depth, mode, true)
                    }
                    _ => {
                        // The parser's empty scalar sits at the key's colon; with a comment after
                        // it, or in a list, the span is not reproduced.
                        if self.tree() {
                            if !in_map || self.bytes.get(at) == Some(&b'#') {
                                return None;
                            }
                            self.emit(
                                Event::Scalar(Cow::Borrowed("~"), ScalarStyle::Plain, 0, None),
                                after - 1,
                                after - 1,
                            );
                        }
                        Some((mode == Mode::Build).then_some(Value::Null))
                    }
                }
            }
            Some(_) => self.scalar(at, indent, depth, mode),
        }
    }

    /// A node that starts at `at` on its line: a scalar, a block scalar's header, or a flow
    /// collection on one line.
    fn scalar(&mut self, at: usize, indent: usize, depth: usize, mode: Mode) -> Option<Option<Value>> {
        let bytes = self.bytes;
        let build = mode == Mode::Build;
        let value = match bytes[at] {
            b'"' | b'\'' => {
                let (text, end, style) = self.quoted(at)?;
                self.emit_scalar(&text, style, at, end);
                self.end_of_line(end)?;
                build.then(|| Value::String(text.into_owned()))
            }
            b'|' | b'>' => return self.block_scalar(at, indent, mode),
            b'{' | b'[' => {
                let (value, end) = self.flow(at, depth, build)?;
                self.end_of_line(end)?;
                value
            }
            _ => {
                let (text, end) = self.plain(at, self.line_end(at))?;
                self.emit_scalar(&Cow::Borrowed(text), ScalarStyle::Plain, at, end);
                self.end_of_line(end)?;
                if build {
                    Some(scalar(Cow::Borrowed(text), ScalarStyle::Plain)?)
                } else if finite(text) {
                    None
                } else {
                    return None;
                }
            }
        };
        Some(value)
    }

    /// Whether a plain scalar may start at `at`: not at an indicator, nor at `-`, `?` or `:`
    /// when what follows (`ends`) would make it one.
    fn plain_start(&self, at: usize, ends: impl Fn(Option<&u8>) -> bool) -> bool {
        let Some(&first) = self.bytes.get(at) else { return false };
        let indicator = matches!(
            first,
            b',' | b'['
                | b']'
                | b'{'
                | b'}'
                | b'#'
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'\''
                | b'"'
                | b'%'
                | b'@'
                | b'`'
        );
        let indicator_then_blank = matches!(first, b'-' | b'?' | b':') && ends(self.bytes.get(at + 1));
        !(indicator || indicator_then_blank)
    }

    /// A plain scalar on one line from `at`: its text and where it ends (before spaces and a
    /// comment); `None` for text a plain scalar cannot hold here.
    fn plain(&self, at: usize, limit: usize) -> Option<(&'a str, usize)> {
        let bytes = self.bytes;
        if !self.plain_start(at, |next| matches!(next, None | Some(b' ' | b'\n'))) {
            return None;
        }
        let mut end = at;
        let mut i = at;
        while i < limit {
            match bytes[i] {
                b' ' => {
                    if bytes.get(i + 1) == Some(&b'#') {
                        break;
                    }
                }
                b':' if matches!(bytes.get(i + 1), None | Some(b' ' | b'\n')) => return None,
                0x21..=0x7e => end = i + 1,
                0x80.. => {
                    let width = printable_char(self.text.get(i..)?)?;
                    i += width;
                    end = i;
                    continue;
                }
                _ => return None,
            }
            i += 1;
        }
        Some((self.text.get(at..end)?, end))
    }

    /// A double- or single-quoted scalar on one line from `at`: its value, the offset after its
    /// quote, and its style.
    fn quoted(&self, at: usize) -> Option<(Cow<'a, str>, usize, ScalarStyle)> {
        if self.bytes.get(at) == Some(&b'"') {
            let (text, end) = self.double(at)?;
            Some((text, end, ScalarStyle::DoubleQuoted))
        } else {
            let (text, end) = self.single(at)?;
            Some((text, end, ScalarStyle::SingleQuoted))
        }
    }

    /// A double-quoted scalar on one line from `at`: its value and the offset after its quote.
    fn double(&self, at: usize) -> Option<(Cow<'a, str>, usize)> {
        let bytes = self.bytes;
        let mut i = at + 1;
        let mut owned: Option<String> = None;
        let mut run = i;
        loop {
            match *bytes.get(i)? {
                b'"' => {
                    let tail = self.text.get(run..i)?;
                    let text = match owned {
                        Some(mut text) => {
                            text.push_str(tail);
                            Cow::Owned(text)
                        }
                        None => Cow::Borrowed(tail),
                    };
                    return Some((text, i + 1));
                }
                b'\\' => {
                    let text = owned.get_or_insert_with(String::new);
                    text.push_str(self.text.get(run..i)?);
                    let (ch, width) = escape(bytes.get(i + 1..)?)?;
                    text.push(ch);
                    i += 1 + width;
                    run = i;
                }
                0x20..=0x7e => i += 1,
                0x80.. => i += printable_char(self.text.get(i..)?)?,
                _ => return None,
            }
        }
    }

    /// A single-quoted scalar on one line from `at`: its value and the offset after its quote.
    fn single(&self, at: usize) -> Option<(Cow<'a, str>, usize)> {
        let bytes = self.bytes;
        let mut i = at + 1;
        let mut doubled = false;
        loop {
            match *bytes.get(i)? {
                b'\'' if bytes.get(i + 1) == Some(&b'\'') => {
                    doubled = true;
                    i += 2;
                }
                b'\'' => {
                    let inner = self.text.get(at + 1..i)?;
                    let text = if doubled { Cow::Owned(inner.replace("''", "'")) } else { Cow::Borrowed(inner) };
                    return Some((text, i + 1));
                }
                0x20..=0x7e => i += 1,
                0x80.. => i += printable_char(self.text.get(i..)?)?,
                _ => return None,
            }
        }
    }

    /// A flow collection or a node in one, on one line from `at` (at `depth`, as the event
    /// walk counts): its value when building, and the offset after it. Only what a flow
    /// collection holds on one line is taken: quoted and plain scalars, collections, and in a
    /// mapping, keys with a value.
    fn flow(&mut self, at: usize, depth: usize, build: bool) -> Option<(Option<Value>, usize)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let bytes = self.bytes;
        match *bytes.get(at)? {
            b'[' => {
                let mut list = Vec::new();
                self.emit(Event::SequenceStart(StructureStyle::Flow, 0, None), at, at + 1);
                let mut i = self.spaces(at + 1);
                loop {
                    if bytes.get(i) == Some(&b']') {
                        self.emit(Event::SequenceEnd, i, i + 1);
                        return Some((build.then_some(Value::Array(list)), i + 1));
                    }
                    let (value, end) = self.flow(i, depth + 1, build)?;
                    list.extend(value);
                    i = self.spaces(end);
                    match bytes.get(i) {
                        Some(b',') => i = self.spaces(i + 1),
                        Some(b']') => {}
                        _ => return None,
                    }
                }
            }
            b'{' => {
                let mut map = Map::new();
                let mut keys = KeySet::default();
                self.emit(Event::MappingStart(StructureStyle::Flow, 0, None), at, at + 1);
                let mut i = self.spaces(at + 1);
                loop {
                    if bytes.get(i) == Some(&b'}') {
                        self.emit(Event::MappingEnd, i, i + 1);
                        return Some((build.then_some(Value::Object(map)), i + 1));
                    }
                    let (key, end, style) = match bytes.get(i)? {
                        b'"' | b'\'' => self.quoted(i)?,
                        _ => {
                            let (key, end) = self.flow_plain(i)?;
                            (Cow::Borrowed(key), end, ScalarStyle::Plain)
                        }
                    };
                    // A plain key's colon is followed by a space; a quoted key's may touch it.
                    let colon = self.spaces(end);
                    // The parser takes keys of up to 1 024 characters from start to colon.
                    if colon - i > 512 {
                        return None;
                    }
                    let after = colon + 1;
                    if bytes.get(colon) != Some(&b':')
                        || (style == ScalarStyle::Plain && bytes.get(after) != Some(&b' '))
                        || !plain_text_key(&key, style)
                        || !keys.insert(key.clone())
                    {
                        return None;
                    }
                    self.emit_scalar(&key, style, i, end);
                    let (value, end) = self.flow(self.spaces(after), depth + 1, build)?;
                    if let Some(value) = value {
                        map.insert(key.into_owned(), value);
                    }
                    i = self.spaces(end);
                    match bytes.get(i) {
                        Some(b',') => i = self.spaces(i + 1),
                        Some(b'}') => {}
                        _ => return None,
                    }
                }
            }
            b'"' | b'\'' => {
                let (text, end, style) = self.quoted(at)?;
                self.emit_scalar(&text, style, at, end);
                Some((build.then(|| Value::String(text.into_owned())), end))
            }
            _ => {
                let (text, end) = self.flow_plain(at)?;
                self.emit_scalar(&Cow::Borrowed(text), ScalarStyle::Plain, at, end);
                if build {
                    Some((Some(scalar(Cow::Borrowed(text), ScalarStyle::Plain)?), end))
                } else {
                    finite(text).then_some((None, end))
                }
            }
        }
    }

    /// A plain scalar in a flow collection from `at`: its text and where it ends (before a flow
    /// indicator, a colon and a space, or spaces); `None` for an empty one or one a plain
    /// scalar cannot hold.
    fn flow_plain(&self, at: usize) -> Option<(&'a str, usize)> {
        let bytes = self.bytes;
        let ends = |b: Option<&u8>| matches!(b, None | Some(b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}'));
        if !self.plain_start(at, ends) {
            return None;
        }
        let mut end = at;
        let mut i = at;
        loop {
            match *bytes.get(i)? {
                b'\n' | b',' | b'[' | b']' | b'{' | b'}' => break,
                b':' if ends(bytes.get(i + 1)) => break,
                b' ' if bytes.get(i + 1) == Some(&b'#') => break,
                b' ' => i += 1,
                0x21..=0x7e => {
                    i += 1;
                    end = i;
                }
                0x80.. => {
                    i += printable_char(self.text.get(i..)?)?;
                    end = i;
                }
                _ => return None,
            }
        }
        Some((self.text.get(at..end)?, end))
    }

    /// A block scalar whose header (`|`, `|-`, `>`, `>-`) is at `at`, in a collection at
    /// `indent`. Built only when literal, without trailing spaces on its blank lines.
    fn block_scalar(&mut self, at: usize, indent: usize, mode: Mode) -> Option<Option<Value>> {
        let bytes = self.bytes;
        let literal = bytes[at] == b'|';
        let strip = bytes.get(at + 1) == Some(&b'-');
        let after = at + 1 + usize::from(strip);
        // `+` keeps trailing lines (the item cut refuses those that blank lines follow), a digit
        // sets the indentation.
        if !matches!(bytes.get(after), None | Some(b' ' | b'\n')) {
            return None;
        }
        self.pos = self.finish_line(after)?;
        // The tree needs the text; a folded one is not built.
        let build = mode == Mode::Build || self.tree();
        if build && !literal {
            return None;
        }
        // Leading blank lines, then the first line with content sets the indentation.
        let first = self.pos;
        let mut deepest_blank = 0;
        let content_indent = loop {
            let spaces = self.spaces(self.pos) - self.pos;
            match bytes.get(self.pos + spaces) {
                Some(b'\n') => {
                    deepest_blank = deepest_blank.max(spaces);
                    self.pos += spaces + 1;
                }
                Some(b'\t' | b'\r') | None => return None,
                Some(_) => break spaces,
            }
        };
        if content_indent <= indent || deepest_blank > content_indent || (self.tree() && self.pos > first) {
            return None;
        }
        let text_start = self.pos + content_indent;
        let mut value = String::new();
        if build {
            // Each leading blank line is one line break (none holds more spaces than the content).
            let blank_lines = bytes[first..self.pos].iter().filter(|&&b| b == b'\n').count();
            value.extend(std::iter::repeat_n('\n', blank_lines));
        }
        while self.pos < bytes.len() {
            let spaces = self.spaces(self.pos) - self.pos;
            let line_end = self.line_end(self.pos);
            if self.pos + spaces == line_end {
                // A blank line; one with more spaces than the content's is content.
                if build && spaces > content_indent {
                    return None;
                }
                if build {
                    value.push('\n');
                }
            } else if spaces >= content_indent {
                // Without a line break at the end of the text, the last line keeps none.
                if build && line_end == bytes.len() {
                    return None;
                }
                let line = self.text.get(self.pos + content_indent..line_end)?;
                check_content(line)?;
                if build {
                    value.push_str(line);
                    value.push('\n');
                }
            } else {
                break;
            }
            self.pos = (line_end + 1).min(bytes.len());
        }
        // The parser's span ends at the next token; a comment line there is not reproduced.
        let next_token = self.spaces(self.pos);
        if self.tree() && bytes.get(next_token) == Some(&b'#') {
            return None;
        }
        self.skip_blank()?;
        if !build {
            return Some(None);
        }
        let kept = value.trim_end_matches('\n').len();
        value.truncate(kept);
        if !strip {
            value.push('\n');
        }
        if self.tree() {
            let style = if literal { ScalarStyle::Literal } else { ScalarStyle::Folded };
            self.emit(Event::Scalar(Cow::Owned(value.clone()), style, 0, None), text_start, next_token);
            if mode != Mode::Build {
                return Some(None);
            }
        }
        Some(Some(Value::String(value)))
    }

    /// The key whose text starts at `at`, and the offset after its colon; `Some(None)` when the
    /// text there is not a key, `None` for a key the full reader may read otherwise.
    #[allow(clippy::type_complexity)]
    fn key(&self, at: usize) -> Option<Option<Key<'a>>> {
        let bytes = self.bytes;
        let (key, end, style) = match bytes.get(at)? {
            b'"' | b'\'' => self.quoted(at)?,
            b'?' if matches!(bytes.get(at + 1), None | Some(b' ' | b'\n')) => return None,
            // A flow collection: a value (as a key, the line's end refuses it).
            b'[' | b'{' => return Some(None),
            _ => {
                // The key ends at the first colon followed by a space or the line's end.
                let line_end = self.line_end(at);
                let Some(colon) = memchr::memchr(b':', &bytes[at..line_end]).and_then(|first| {
                    let mut colon = at + first;
                    loop {
                        if matches!(bytes.get(colon + 1), None | Some(b' ' | b'\n')) {
                            return Some(colon);
                        }
                        colon = colon + 1 + memchr::memchr(b':', &bytes[colon + 1..line_end])?;
                    }
                }) else {
                    return Some(None);
                };
                let (text, end) = self.plain(at, colon)?;
                // The plain scalar must end right at the colon, give or take spaces.
                if end > colon || !bytes[end..colon].iter().all(|&b| b == b' ') {
                    return None;
                }
                (Cow::Borrowed(text), colon, ScalarStyle::Plain)
            }
        };
        // Where the key's text ends: after its quote, or its last character.
        let text_end = if style == ScalarStyle::Plain { at + key.len() } else { end };
        if bytes.get(end) != Some(&b':') || !matches!(bytes.get(end + 1), None | Some(b' ' | b'\n')) {
            return if style == ScalarStyle::Plain { None } else { Some(None) };
        }
        // Longer keys are not implicit keys to the parser (1 024 characters from the key's start
        // to its colon, escapes and spaces included); a document marker at a line's start is no key.
        let line_start = at == 0 || bytes[at - 1] == b'\n';
        if end - at > 512 || (line_start && starts_with_marker(&bytes[at..])) || !plain_text_key(&key, style) {
            return None;
        }
        Some(Some(Key { text: key, after: end + 1, end: text_end, style }))
    }

    /// After a node on its line: spaces and a comment or nothing; `pos` moves to the next line
    /// with content.
    fn end_of_line(&mut self, end: usize) -> Option<()> {
        self.pos = self.finish_line(end)?;
        self.skip_blank()
    }

    /// The start of the next line, when the rest of the line from `end` is spaces and a comment
    /// or nothing.
    fn finish_line(&self, end: usize) -> Option<usize> {
        let at = self.spaces(end);
        match self.bytes.get(at) {
            None | Some(b'\n') => {}
            Some(b'#') if at > end => {}
            _ => return None,
        }
        let line_end = self.line_end(at);
        check_content(self.text.get(at..line_end)?)?;
        Some((line_end + 1).min(self.bytes.len()))
    }

    /// From `at` (the end of a line, or a comment) to the next line with content.
    fn past_line(&mut self, at: usize) -> Option<()> {
        let end = self.line_end(at);
        check_content(self.text.get(at..end)?)?;
        self.pos = (end + 1).min(self.bytes.len());
        self.skip_blank()
    }

    /// Past blank and comment lines from `pos`; `None` at a line this reader does not take.
    fn skip_blank(&mut self) -> Option<()> {
        while self.pos < self.bytes.len() {
            let at = self.spaces(self.pos);
            match self.bytes.get(at) {
                None => self.pos = self.bytes.len(),
                Some(b'\n') => self.pos = at + 1,
                Some(b'#') => {
                    let end = self.line_end(at);
                    check_content(self.text.get(at..end)?)?;
                    self.pos = (end + 1).min(self.bytes.len());
                }
                Some(b'\t' | b'\r') => return None,
                Some(_) => return Some(()),
            }
        }
        Some(())
    }

    /// The indentation of the line at `pos` (which holds content), `None` at the end.
    fn indent(&self) -> Option<usize> {
        (self.pos < self.bytes.len()).then(|| self.spaces(self.pos) - self.pos)
    }

    /// Whether a list entry's dash is at `at`.
    fn dash_at(&self, at: usize) -> bool {
        self.bytes.get(at) == Some(&b'-') && matches!(self.bytes.get(at + 1), None | Some(b' ' | b'\n'))
    }

    fn spaces(&self, from: usize) -> usize {
        let rest = self.bytes.get(from..).unwrap_or_default();
        from + rest.iter().take_while(|&&b| b == b' ').count()
    }

    fn line_end(&self, from: usize) -> usize {
        let rest = self.bytes.get(from..).unwrap_or_default();
        memchr::memchr(b'\n', rest).map_or(self.bytes.len(), |at| from + at)
    }

    fn line_start(&self, at: usize) -> usize {
        memchr::memrchr(b'\n', &self.bytes[..at]).map_or(0, |n| n + 1)
    }
}

/// Text YAML reads as it is (a comment, a block scalar's line): printable characters and tabs.
fn check_content(text: &str) -> Option<()> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\t' | 0x20..=0x7e => i += 1,
            0x80.. => i += printable_char(text.get(i..)?)?,
            _ => return None,
        }
    }
    Some(())
}

/// The width of the non-ASCII character that starts `text`, when YAML reads it as an ordinary
/// printable character: not a C1 control (nor NEL, a line break to some YAML), a byte order
/// mark, a noncharacter, or a space of some kind (the line and paragraph separators included).
fn printable_char(text: &str) -> Option<usize> {
    let ch = text.chars().next()?;
    let odd = ch < '\u{a0}' || ch.is_whitespace() || matches!(ch, '\u{feff}' | '\u{fffe}' | '\u{ffff}');
    (!odd).then(|| ch.len_utf8())
}

/// The character an escape in a double-quoted scalar stands for (`rest` starts after the
/// backslash), and how many bytes it takes.
fn escape(rest: &[u8]) -> Option<(char, usize)> {
    let ch = match *rest.first()? {
        b'0' => '\0',
        b'a' => '\u{7}',
        b'b' => '\u{8}',
        b't' => '\t',
        b'n' => '\n',
        b'v' => '\u{b}',
        b'f' => '\u{c}',
        b'r' => '\r',
        b'e' => '\u{1b}',
        b' ' => ' ',
        b'"' => '"',
        b'/' => '/',
        b'\\' => '\\',
        b'N' => '\u{85}',
        b'_' => '\u{a0}',
        b'L' => '\u{2028}',
        b'P' => '\u{2029}',
        b'x' | b'u' | b'U' => {
            let digits = match rest[0] {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let hex = std::str::from_utf8(rest.get(1..1 + digits)?).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            return Some((char::from_u32(u32::from_str_radix(hex, 16).ok()?)?, 1 + digits));
        }
        _ => return None,
    };
    Some((ch, 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::krm::scan::tail_items;

    /// The line reader's items of `part` (a list from its first dash), checked against the walk.
    fn read_as_the_walk_does(part: &str, dash: usize) -> Read {
        let read = items(part, dash);
        let taken = match read.stop {
            Stop::At(at) => &part[..at],
            Stop::End(_) => part,
        };
        if !read.spots.is_empty() {
            let crate::krm::scan::Run { spots, headers, end, cut_failed } =
                tail_items(taken, 0).expect("the walk takes it");
            assert_eq!(spots, read.spots, "{part}");
            assert_eq!(headers, read.headers, "{part}");
            assert_eq!(cut_failed, read.cut_failed, "{part}");
            if let Stop::End(read_end) = read.stop {
                assert_eq!(end, read_end, "{part}");
            }
        }
        read
    }

    #[test]
    fn takes_the_layouts_manifests_are_written_in() {
        let list = r#"- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web   # the name
    namespace: 'team-a'
    labels: {app: web, "tier": front, count: 3}
    annotations:
      note: "tab\there, quote \" and \u00e9"
      script: |
        echo one

        echo two
      folded: |-
        kept
      empty: ""
      none:
      yes-no: "yes"
  spec:
    replicas: 3
    template:
      spec:
        containers:
        - name: main
          image: nginx:1.25
          args: ["--port=8080", '--x', [nested, {k: v}], {}, []]
          resources: {requests: {cpu: 100m, memory: 128Mi}}
          env:
            - name: A
              value: "on"
            -
              name: B
            - # a comment on the dash line
              name: C
          command:
          - sh
          - -c
          - >
            echo folded
            text
        volumes:
          - name: config
            configMap: {name: web, defaultMode: 0644}
# between items
-
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: "c", labels: {a: b}}
  data:
    key with spaces: value with spaces
    url: http://example.com/a#b
    ratio: 1.5
    big: 123456789012345678
- kind: Service
  metadata:
    name: s
functionConfig:
  k: v
"#;
        let read = read_as_the_walk_does(list, 0);
        assert_eq!(read.spots.len(), 3);
        assert_eq!(read.stop, Stop::End(Some(list.find("functionConfig").expect("the key"))));
        // Indented dashes, and the end of the text.
        let indented: String = list
            .lines()
            .take_while(|line| !line.starts_with("functionConfig"))
            .fold(String::new(), |out, line| if line.is_empty() { out + "\n" } else { out + "    " + line + "\n" });
        let read = read_as_the_walk_does(&indented, 4);
        assert_eq!((read.spots.len(), read.stop), (3, Stop::End(None)));
    }

    #[test]
    fn stops_at_what_it_does_not_take() {
        for body in [
            "a: b\n  c\n",
            "a: \"b\n  c\"\n",
            "a: [b,\n  c]\n",
            "a: &x b\n",
            "a: *x\n",
            "a: !!str b\n",
            "? a\n: b\n",
            "a: |+\n  b\n",
            "a: |2\n   b\n",
            "a:\tb\n",
            "a: b\t\n",
            "a: b\r\n",
            "a: b\u{85}c\n",
            "a: \u{a0}\n",
            "a: \"\\q\"\n",
            "a: b\na: c\n",
            "<<: {a: b}\n",
            "a: .inf\n",
            "1: a\n",
            "null: a\n",
            "a: {b, c}\n",
            "a: [b: c]\n",
            "a: b: c\n",
            "a: - b\n",
            "a: |\nb: c\n",
            "a: |\n    x\n  y\n",
            "a:\n  b\n",
            "- a\n",
        ]
        .into_iter()
        .map(String::from)
        .chain([
            // Keys the parser does not take as implicit keys: long from start to colon.
            format!("\"{}\": v\n", "\\x41".repeat(300)),
            format!("a{}: v\n", " ".repeat(1100)),
            format!("'{}': v\n", "''".repeat(512)),
            format!("k: {{{}: v}}\n", "a".repeat(1030)),
            format!("k: {{\"a\"{}: v}}\n", " ".repeat(1030)),
        ]) {
            let part = format!("- k: v\n  {}- kind: Next\n", body.replace('\n', "\n  ").trim_end_matches(' '));
            let read = read_as_the_walk_does(&part, 0);
            assert_eq!(read.stop, Stop::At(0), "{body:?}");
            // What follows it is read again from its dash line.
            let read = read_as_the_walk_does(&format!("- kind: First\n{part}"), 0);
            assert_eq!((read.spots.len(), read.stop), (1, Stop::At("- kind: First\n".len())), "{body:?}");
        }
    }

    #[test]
    fn builds_headers_as_the_walk_does() {
        for metadata in [
            "[a,]",
            "{a: 1,}",
            "[ ]",
            "{ }",
            "[\"a\" , 'b']",
            "{\"a\":1}",
            "{'a':1}",
            "[a b, c  ]",
            "{a: b c}",
            "[a:b]",
            "[a:b, c]",
            "{a: [b:c]}",
            "[-1, -a, :a, ?a, a#b]",
            "[0644, 0x1F, 1e3, 1_000, 12:30, .5, +1, ~, null, Null, true, True]",
            "{a: \"\\x41\\u00e9\\U0001F600\\N\\_\\/\\ \"}",
            "'it''s'",
            "\"\"",
            "|\n    a\n     b\n\n    c\n\n",
            "|-\n    a\n",
            "|\n\n    a\n",
            "|\n    a\n  x: 1\n",
            "\n    name: a\n    labels:\n      x: \"1\"\n    list:\n    - a\n    -\n    - b: c\n      d: e\n",
        ] {
            let part = format!("- kind: K\n  metadata: {metadata}\n  spec: {{}}\n- kind: Next\n");
            let read = read_as_the_walk_does(&part, 0);
            let walk = tail_items(&part, 0).map(|run| run.spots.len());
            if walk == Some(2) {
                assert_eq!(read.spots.len(), 2, "taken by the walk, not by the line reader: {metadata:?}");
            }
        }
    }

    #[test]
    fn gives_the_parsers_events_for_the_splice_or_none() {
        for text in [
            "k: v\nl:\n- a\n- b: c\n  d: [e, {f: g}]\nm: |\n  x\n\n  y\nz:\n",
            "k:\n  - x # c\n  -   y\nq: 'a' # c\nr: {\"s\": 1}\n",
            "s: |-\n    x\n- a\n",
        ] {
            if let Some(agree) = crate::krm::splice::trees_agree(text) {
                assert_eq!(agree, Ok(()), "{text:?}");
            }
        }
        assert!(crate::krm::splice::trees_agree("k: v\nl:\n- a\n- b: c\n  d: [e, {f: g}]\nm: |\n  x\n\n  y\nz:\n")
            .is_some());
        // Layouts whose spans it does not reproduce.
        for text in ["l:\n-\n- a\n", "k: # c\n", "m: |\n\n  x\n", "m: |\n  x\n# c\nk: v\n", "m: >\n  x\n"] {
            assert!(read_events(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn a_document_marker_is_no_key() {
        for text in ["--- a: 1\n", "... a: 1\n", "k: v\n--- : 1\n", "kind: K\n--- a: 1\n"] {
            assert_eq!(read_document(text), None, "{text:?}");
        }
        assert!(read_document("kind: K\n---a: 1\n").is_some());
    }

    #[test]
    fn a_list_that_ends_at_what_is_not_a_key_is_left_to_the_walk() {
        for after in [".\n", "---\n", "...\n", "--- a: 1\n", "... a: 1\n", "--- : 1\n", "- x\n", " - kind: Deeper\n"] {
            let part = format!("  - kind: A\n{after}");
            let read = read_as_the_walk_does(&part, 2);
            assert_eq!(read.stop, Stop::At(0), "{after:?}");
        }
    }
}
