//! The walk over granit-parser's events: the reader of what the line reader (`krm::block`)
//! does not take. It walks a list's items (their places and headers, the rest proved to read
//! without error), builds one item's value from its own text, and matches a written text
//! against a value (the splice's read-back check), all by the rules of `krm::rules`. Whatever
//! it cannot prove it leaves to the full reader (`None`).

use super::block;
use super::cut::{cut_last, Spot};
use super::head::Head;
use super::rules::{finite, plain_text_key, read_style, scalar, scalar_is, KeySet, LINEAR_KEYS, MAX_DEPTH};
use crate::doc::{Map, Value};
use granit_parser::{Event, Parser, ScalarStyle, StructureStyle};
use std::borrow::Cow;

/// A lazy item's value, read from its own text (which [`scan`] proved reads without error):
/// the events walked into a value, as the full reader would build it, several times faster.
/// `None` only if the text holds what the walk leaves to the full reader.
pub fn read_item(source: &str) -> Option<Value> {
    block::read_document(source).or_else(|| walk_item(source))
}

/// [`read_item`] by the walk over the parser's events alone.
pub(super) fn walk_item(source: &str) -> Option<Value> {
    let mut walk = Walk { events: Parser::new_from_str(source), text: source, keys: Vec::new() };
    walk.expect(|e| matches!(e, Event::StreamStart))?;
    walk.expect(|e| matches!(e, Event::DocumentStart(..)))?;
    let value = walk.build(1)?;
    walk.expect(|e| matches!(e, Event::DocumentEnd))?;
    walk.expect(|e| matches!(e, Event::StreamEnd))?;
    Some(value)
}

pub(super) struct Walk<'a> {
    pub(super) events: Parser<'a, granit_parser::StrInput<'a>>,
    pub(super) text: &'a str,
    /// Keys of the mappings being checked, innermost last (see [`Walk::check`]).
    pub(super) keys: Vec<Cow<'a, str>>,
}

impl<'a> Walk<'a> {
    /// The next event and where it starts; `None` at a syntax error.
    pub(super) fn next(&mut self) -> Option<(Event<'a>, usize)> {
        let (event, span) = self.events.next()?.ok()?;
        Some((event, span.byte_range()?.start))
    }

    /// The next key of a mapping and where it starts, `Some(None)` at the mapping's end, `None`
    /// for a key the full reader may read otherwise (see [`plain_text_key`]).
    pub(super) fn next_key(&mut self) -> Option<Option<(Cow<'a, str>, usize)>> {
        match self.next()? {
            (Event::MappingEnd, _) => Some(None),
            (Event::Scalar(key, style, 0, None), start) if plain_text_key(&key, style) => Some(Some((key, start))),
            _ => None,
        }
    }

    pub(super) fn expect(&mut self, test: impl Fn(&Event<'a>) -> bool) -> Option<()> {
        let (event, _) = self.next()?;
        test(&event).then_some(())
    }

    /// The block list of items: each a block mapping, its place and header kept, each but the
    /// last cut out of the text; `Some(false)` when one could not be cut.
    pub(super) fn items(&mut self, spots: &mut Vec<Spot>, headers: &mut Vec<Head>) -> Option<bool> {
        let mut cut = true;
        let (event, _) = self.next()?;
        if !matches!(event, Event::SequenceStart(StructureStyle::Block, 0, None)) {
            return None;
        }
        loop {
            let (event, start) = self.next()?;
            match event {
                Event::SequenceEnd => return Some(cut),
                Event::MappingStart(StructureStyle::Block, 0, None) => {}
                _ => return None,
            }
            let before = self.text.get(..start)?;
            let column = before.len() - before.rfind('\n').map_or(0, |at| at + 1) + 1;
            cut &= cut_last(self.text, spots, start);
            spots.push(Spot::new(start, column)?);
            headers.push(Head::from(&self.item()?));
        }
    }

    /// One item's keys: the header's values built, the rest checked.
    pub(super) fn item(&mut self) -> Option<Map> {
        let mut keys = KeySet::default();
        let mut fields: [Option<Value>; 3] = Default::default();
        while let Some((key, _)) = self.next_key()? {
            if !keys.insert(key.clone()) {
                return None;
            }
            match &*key {
                "apiVersion" => fields[0] = Some(self.build(2)?),
                "kind" => fields[1] = Some(self.build(2)?),
                "metadata" => fields[2] = Some(self.build(2)?),
                _ => self.check(2)?,
            }
        }
        // The header's own order, as `Item::from` keeps it.
        let mut header = Map::new();
        for (key, field) in ["apiVersion", "kind", "metadata"].into_iter().zip(fields) {
            if let Some(field) = field {
                header.insert(key.to_string(), field);
            }
        }
        Some(header)
    }

    /// The next node as a value, read as the full reader reads it.
    pub(super) fn build(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (event, _) = self.next()?;
        match event {
            Event::Scalar(value, style, 0, tag) => scalar(value, read_style(style, tag.as_deref())?),
            Event::SequenceStart(_, 0, None) => {
                let mut list = Vec::new();
                loop {
                    if let Some(Ok((Event::SequenceEnd, _))) = self.events.peek() {
                        self.next()?;
                        return Some(Value::Array(list));
                    }
                    list.push(self.build(depth + 1)?);
                }
            }
            Event::MappingStart(_, 0, None) => {
                let mut map = Map::new();
                while let Some((key, _)) = self.next_key()? {
                    let value = self.build(depth + 1)?;
                    if map.insert(key.into_owned(), value).is_some() {
                        return None;
                    }
                }
                Some(Value::Object(map))
            }
            _ => None,
        }
    }

    /// Walks the next node, `Some` when it reads as `value` (see [`reads_as`]).
    pub(super) fn matches(&mut self, value: &Value, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (event, _) = self.next()?;
        match (event, value) {
            (Event::Scalar(text, style, 0, tag), value) => {
                scalar_is(&text, read_style(style, tag.as_deref())?, value).then_some(())
            }
            (Event::SequenceStart(_, 0, None), Value::Array(list)) => {
                for value in list {
                    self.matches(value, depth + 1)?;
                }
                self.expect(|e| matches!(e, Event::SequenceEnd))
            }
            (Event::MappingStart(_, 0, None), Value::Object(map)) => {
                for (key, value) in map {
                    let (read, _) = self.next_key()??;
                    if read != key.as_str() {
                        return None;
                    }
                    self.matches(value, depth + 1)?;
                }
                self.next_key()?.is_none().then_some(())
            }
            _ => None,
        }
    }

    /// Walks the next node without building it, proving it reads without error (see the module).
    pub(super) fn check(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (event, _) = self.next()?;
        match event {
            Event::Scalar(value, style, 0, tag) => {
                (read_style(style, tag.as_deref())? != ScalarStyle::Plain || finite(&value)).then_some(())
            }
            Event::SequenceStart(_, 0, None) => loop {
                if let Some(Ok((Event::SequenceEnd, _))) = self.events.peek() {
                    self.next()?;
                    return Some(());
                }
                self.check(depth + 1)?;
            },
            Event::MappingStart(_, 0, None) => {
                // The keys of this mapping sit on the shared stack above `base`.
                let base = self.keys.len();
                let mut many: Option<std::collections::HashSet<Cow<'a, str>>> = None;
                let result = loop {
                    let key = match self.next_key() {
                        Some(Some((key, _))) => key,
                        Some(None) => break Some(()),
                        None => break None,
                    };
                    let fresh = match &mut many {
                        Some(many) => many.insert(key),
                        None if self.keys[base..].contains(&key) => false,
                        None => {
                            self.keys.push(key);
                            if self.keys.len() - base > LINEAR_KEYS {
                                many = Some(self.keys.drain(base..).collect());
                            }
                            true
                        }
                    };
                    if !fresh || self.check(depth + 1).is_none() {
                        break None;
                    }
                };
                self.keys.truncate(base);
                result
            }
            _ => None,
        }
    }
}

/// Whether `text`, one YAML document, reads as `value` (keys in its order), walking its events
/// against the value without building one; false too for what [`read_item`] leaves to the full
/// reader.
pub fn reads_as(text: &str, value: &Value) -> bool {
    // The line reader's events, matched against the value without building one.
    if let Some(events) = block::read_events(text) {
        let mut events = events.into_iter();
        return events_match(&mut events, value).is_some() && events.next().is_none();
    }
    if let Some(read) = block::read_document(text) {
        return same_in_order(&read, value);
    }
    let mut walk = Walk { events: Parser::new_from_str(text), text, keys: Vec::new() };
    let mut read = || {
        walk.expect(|e| matches!(e, Event::StreamStart))?;
        walk.expect(|e| matches!(e, Event::DocumentStart(..)))?;
        walk.matches(value, 1)?;
        walk.expect(|e| matches!(e, Event::DocumentEnd))?;
        walk.expect(|e| matches!(e, Event::StreamEnd))
    };
    read().is_some()
}

/// Walks the next node of `events` against `value` as [`Walk::matches`] walks the parser's.
fn events_match<'a>(events: &mut impl Iterator<Item = block::Spanned<'a>>, value: &Value) -> Option<()> {
    match (events.next()?.0, value) {
        (Event::Scalar(text, style, 0, None), value) => scalar_is(&text, style, value).then_some(()),
        (Event::SequenceStart(_, 0, None), Value::Array(list)) => {
            for value in list {
                events_match(events, value)?;
            }
            matches!(events.next()?.0, Event::SequenceEnd).then_some(())
        }
        (Event::MappingStart(_, 0, None), Value::Object(map)) => {
            for (key, value) in map {
                let (Event::Scalar(read, ..), ..) = events.next()? else { return None };
                if read != key.as_str() {
                    return None;
                }
                events_match(events, value)?;
            }
            matches!(events.next()?.0, Event::MappingEnd).then_some(())
        }
        _ => None,
    }
}

/// Whether two values are equal with their keys in the same order.
fn same_in_order(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && same_in_order(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_in_order(a, b)),
        _ => a == b,
    }
}
