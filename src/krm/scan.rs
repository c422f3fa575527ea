//! The fast reader of a YAML ResourceList: one walk over the parser's events that finds each
//! item's text and builds only its header (`apiVersion`, `kind`, `metadata`) and the
//! `functionConfig`. An item's body is parsed from its own text when a step first asks for it
//! ([`Item::from_source`]), so items no step reads are never built and are written back as read.
//!
//! Written by hand: the YAML crates either build every value (serde-saphyr, which this replaces
//! on the hot path and still reads everything else) or only hand out events (granit-parser, which
//! this walks). The walk reads values with serde-saphyr's rules where it must (headers and the
//! config), and proves the rest of each item would read without error and to the same value
//! from its text alone: no tags, anchors, aliases or merge keys, keys that are plain text, no
//! duplicate keys, no non-finite floats, no 19-digit numbers, bounded depth. Anything it cannot
//! prove returns `None`, and the caller reads the list the old way, whose errors and values are
//! the reference.

use super::block;
use super::item::{Head, Item, Source};
use super::stream::{Items, Parts};
use crate::doc::{Map, Strict, Value};
use granit_parser::{Event, Parser, ScalarStyle, StructureStyle, Tag};
use std::borrow::Cow;
use std::sync::Arc;

/// Deeper nesting is left to the full reader, whose budget and messages apply.
pub(super) const MAX_DEPTH: usize = 200;

/// Mappings with more keys check duplicates with a hash set.
const LINEAR_KEYS: usize = 16;

/// Inputs at least this large are read on two threads when the machine has two cores.
const SPLIT_BYTES: usize = 256 << 10;

/// The split reading's parts but the last hold at least this much text (each has a small fixed
/// cost), and there are at most [`MAX_PARTS`]: more parts than threads let the threads end
/// together.
const PART_BYTES: usize = 64 << 10;
const MAX_PARTS: usize = 8;

/// What one walk over (part of) the list found: the top-level fields, each item's place and
/// header, and the top-level keys.
#[derive(Default)]
pub(super) struct Found {
    pub(super) parts: Parts,
    pub(super) spots: Vec<Spot>,
    pub(super) headers: Vec<Head>,
    keys: Vec<String>,
    items_read: bool,
    /// An item's text could not be cut out of the list ([`super::item_cut`]).
    pub(super) cut_failed: bool,
}

/// Where an item is in the input: the byte offset where its mapping starts and its column
/// (1-based), and its text as [`super::item_cut`] cuts it (start, end), once the walk has seen
/// where the next item starts. Cutting while walking reads the item's bytes while they are still
/// in the cache, on the thread that walked them, instead of in a pass of its own afterwards.
/// Offsets fit: [`scan`] leaves inputs over 64 MiB to the full reader.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spot {
    start: u32,
    column: u32,
    cut: Option<(u32, u32)>,
}

impl Spot {
    pub(super) fn new(start: usize, column: usize) -> Option<Spot> {
        Some(Spot { start: u32::try_from(start).ok()?, column: u32::try_from(column).ok()?, cut: None })
    }

    /// The item's text cut out of `text` and moved to column 0, once cut (tests).
    #[cfg(test)]
    pub(super) fn standalone(&self, text: &str) -> Option<String> {
        let (start, end) = self.cut?;
        Some(super::moved_left(text.get(start as usize..end as usize)?, (self.column as usize).checked_sub(1)?))
    }

    /// The spot at `offset` bytes later.
    fn moved(&mut self, offset: usize) -> Option<()> {
        let offset = u32::try_from(offset).ok()?;
        if let Some((start, end)) = &mut self.cut {
            (*start, *end) = (start.checked_add(offset)?, end.checked_add(offset)?);
        }
        self.start = self.start.checked_add(offset)?;
        Some(())
    }
}

/// Cuts the text of the last item in `spots` out of `text`, now that the next one starts at
/// `next`; `false` when it cannot be cut.
pub(super) fn cut_last(text: &str, spots: &mut [Spot], next: usize) -> bool {
    let Some(spot) = spots.last_mut() else { return true };
    let cut = super::item_cut(text, spot.start as usize, next, spot.column as usize, false);
    spot.cut = cut.and_then(|(start, end, _)| Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?)));
    spot.cut.is_some()
}

/// Reads `text` as a ResourceList with lazily built items, or `None` to leave it to the full
/// reader (anything unusual, and every error).
pub fn scan(text: &str, shared: Option<&Arc<String>>) -> Option<Parts> {
    // Directives change how the rest reads; a long digit run may be an integer the full reader
    // refuses; past its scalar budget (64 MiB of scalar text) it refuses the input.
    if text.len() > 64 << 20 || text.starts_with('%') || text.contains("\n%") || has_long_digit_run(text) {
        return None;
    }
    let threads = text.len() >= SPLIT_BYTES && super::two_cores();
    let found = match split_scan(text, threads) {
        Some(found) => found,
        None => top_level(text, 0)?,
    };
    let Found { mut parts, spots, headers, items_read, cut_failed, .. } = found;
    if !items_read || cut_failed || spots.len() != headers.len() {
        return None;
    }
    let list_end = parts.after_items.unwrap_or(text.len());
    // The items are made at their exact number, then each gets its source in place.
    let mut items: Vec<Item> = headers.into_iter().map(Item::from_head).collect();
    for (i, (spot, item)) in spots.iter().zip(&mut items).enumerate() {
        // The walk cut every item but the last (a failed cut returned above).
        let (start, end) = match spot.cut {
            Some((start, end)) => (start as usize, end as usize),
            None => {
                let last = i + 1 == spots.len();
                let next = spots.get(i + 1).map_or(list_end, |next| next.start as usize);
                let (start, end, _) = super::item_cut(text, spot.start as usize, next, spot.column as usize, last)?;
                (start, end)
            }
        };
        let indent = (spot.column as usize).checked_sub(1)?;
        item.attach(match shared {
            Some(input) => Source::cut(input, start, end, indent),
            None => Source::Own(super::moved_left(text.get(start..end)?, indent).into_boxed_str()),
        });
    }
    parts.items = Items::List(items, None);
    parts.sources_attached = true;
    Some(parts)
}

/// The top-level mapping of `text` (at `offset` in the input), which must be a whole document:
/// the ResourceList, the part of it before a split, or the keys after its items.
pub(super) fn top_level(text: &str, offset: usize) -> Option<Found> {
    top_level_with(text, offset, false)
}

/// [`top_level`]; with `open_items`, `items` is the last key, its list cut off (its value reads
/// as null).
fn top_level_with(text: &str, offset: usize, open_items: bool) -> Option<Found> {
    let mut walk = Walk { events: Parser::new_from_str(text), text, keys: Vec::new() };
    walk.expect(|e| matches!(e, Event::StreamStart))?;
    // Implicit: the keys after a split's items must not start a document of their own.
    walk.expect(|e| {
        matches!(e, Event::DocumentStart(false, _)) || (offset == 0 && matches!(e, Event::DocumentStart(..)))
    })?;
    let (event, _) = walk.next()?;
    if !matches!(event, Event::MappingStart(StructureStyle::Block, 0, None)) {
        return None;
    }
    let mut found = Found::default();
    let mut keys = KeySet::default();
    while let Some((key, start)) = walk.next_key()? {
        if found.items_read && found.parts.after_items.is_none() {
            found.parts.after_items = Some(offset + start);
        }
        if !keys.insert(key.clone()) {
            return None;
        }
        found.keys.push(key.to_string());
        match &*key {
            "apiVersion" => found.parts.api_version = Some(walk.build(1)?),
            "kind" => found.parts.kind = Some(walk.build(1)?),
            "functionConfig" => found.parts.function_config = Some(walk.build(1)?),
            "items" if open_items => {
                walk.expect(|e| matches!(e, Event::Scalar(value, ScalarStyle::Plain, 0, None) if value.is_empty() || value == "~"))?;
                found.items_read = true;
            }
            "items" => {
                found.cut_failed = !walk.items(&mut found.spots, &mut found.headers)?;
                found.items_read = true;
            }
            _ => walk.check(1)?,
        }
    }
    walk.expect(|e| matches!(e, Event::DocumentEnd))?;
    walk.expect(|e| matches!(e, Event::StreamEnd))?;
    for spot in &mut found.spots {
        spot.moved(offset)?;
    }
    Some(found)
}

/// The list read in parts cut at items: the text before the first item as a ResourceList whose
/// `items` is its last key, the items between two cuts as a list of their own (read by
/// [`block::items`] as far as it goes, then by the walk over the parser's events), and the items
/// after the last cut up to where the list ends; the keys after it as a mapping of their own.
/// With `threads`, two threads each take the next part to read until none is left, so they end
/// together even when one starts late. `None` (read it in one walk) unless each part reads
/// exactly as it does within the whole: a cut line is a dash at the column of the items'
/// dashes, the first part's list is its last key and ends at the first cut, every other part but
/// the last is a list that ends where its text does, and the list ends at a key at column 0.
pub(super) fn split_scan(text: &str, threads: bool) -> Option<Found> {
    // A document end marker (`...` at column 0) before a cut would end a part's document early,
    // where the whole document would refuse it.
    if memchr::memmem::find(text.as_bytes(), b"\n...").is_some() {
        return None;
    }
    let (dash, list_start) = items_start(text)?;
    let count = ((text.len() - list_start) / PART_BYTES).clamp(1, MAX_PARTS);
    let mut cuts: Vec<usize> = Vec::with_capacity(count);
    cuts.push(list_start);
    for n in 1..count {
        let last = cuts[cuts.len() - 1];
        let from = (list_start + (text.len() - list_start) / count * n).max(last + PART_BYTES);
        let Some(at) = split_point(text, dash, from) else { break };
        cuts.push(at);
    }
    let read = |n: usize| match n {
        0 => Part::Head(top_level_with(&text[..cuts[0]], 0, true).map(Box::new)),
        _ => Part::Items(list_part(text, cuts[n - 1], cuts.get(n).copied().unwrap_or(text.len()), dash)),
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take_parts = || {
        let mut read_here = Vec::new();
        loop {
            let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n > cuts.len() {
                break read_here;
            }
            read_here.push((n, read(n)));
        }
    };
    let mut parts = if threads {
        std::thread::scope(|scope| {
            // Without a second thread this one reads every part.
            let helper = super::threads::spawn(scope, take_parts);
            let mut parts = take_parts();
            match helper.map(|helper| helper.join()) {
                Ok(Ok(theirs)) => parts.extend(theirs),
                Ok(Err(_)) => return None,
                Err(_) => {}
            }
            Some(parts)
        })?
    } else {
        take_parts()
    };
    parts.sort_unstable_by_key(|(n, _)| *n);
    let mut parts = parts.into_iter().map(|(_, part)| part);
    let Some(Part::Head(Some(found))) = parts.next() else { return None };
    let mut found = *found;
    // The first part's list must end where its text does.
    if !found.items_read || found.parts.after_items.is_some() || found.keys.last().map(String::as_str) != Some("items")
    {
        return None;
    }
    let mut list_end = None;
    for part in parts {
        let Part::Items(Some((spots, headers, end, cut_failed))) = part else { return None };
        // Only the last part's list may end before its text does.
        if list_end.is_some() {
            return None;
        }
        list_end = end;
        let joined = append(text, (&mut found.spots, &mut found.headers), spots, headers)?;
        found.cut_failed |= cut_failed || !joined;
    }
    if let Some(end) = list_end {
        let rest = top_level(&text[end..], end)?;
        if rest.items_read || rest.keys.iter().any(|key| found.keys.contains(key)) {
            return None;
        }
        found.parts.after_items = Some(end);
        found.parts.api_version = found.parts.api_version.or(rest.parts.api_version);
        found.parts.kind = found.parts.kind.or(rest.parts.kind);
        found.parts.function_config = found.parts.function_config.or(rest.parts.function_config);
    }
    Some(found)
}

/// The items from `start` to `end` in `text` (a dash line at `dash` spaces each): read by
/// [`block::items`] as far as it takes them, the rest by the walk ([`tail_items`]).
#[allow(clippy::type_complexity)]
fn list_part(text: &str, start: usize, end: usize, dash: usize) -> Option<(Vec<Spot>, Vec<Head>, Option<usize>, bool)> {
    let part = text.get(start..end)?;
    let block::Read { mut spots, mut headers, mut cut_failed, stop } = block::items(part, dash);
    for spot in &mut spots {
        spot.moved(start)?;
    }
    match stop {
        block::Stop::End(end) => Some((spots, headers, end.map(|end| start + end), cut_failed)),
        block::Stop::At(at) => {
            let (more, more_headers, end, failed) = tail_items(part.get(at..)?, start + at)?;
            let joined = append(text, (&mut spots, &mut headers), more, more_headers)?;
            cut_failed |= failed || !joined;
            Some((spots, headers, end, cut_failed))
        }
    }
}

/// Appends items read after the last of `read` (`spots`, `headers`), which ends where the first
/// of them starts and is cut there; `Some(false)` when it could not be cut, `None` when there are
/// none.
fn append(text: &str, read: (&mut Vec<Spot>, &mut Vec<Head>), spots: Vec<Spot>, headers: Vec<Head>) -> Option<bool> {
    let joined = cut_last(text, read.0, spots.first()?.start as usize);
    read.0.extend(spots);
    read.1.extend(headers);
    Some(joined)
}

/// One part of a split reading (see [`split_scan`]): the first, or items after a cut.
enum Part {
    Head(Option<Box<Found>>),
    #[allow(clippy::type_complexity)]
    Items(Option<(Vec<Spot>, Vec<Head>, Option<usize>, bool)>),
}

/// The indentation of the dashes of the top-level `items` list and where its first dash line
/// starts, when it is a block list of block mappings under a key at column 0.
pub(super) fn items_start(text: &str) -> Option<(usize, usize)> {
    let mut walk = Walk { events: Parser::new_from_str(text), text, keys: Vec::new() };
    walk.expect(|e| matches!(e, Event::StreamStart))?;
    walk.expect(|e| matches!(e, Event::DocumentStart(..)))?;
    walk.expect(|e| matches!(e, Event::MappingStart(StructureStyle::Block, 0, None)))?;
    loop {
        // Scalar keys with scalar values (apiVersion, kind) may come first; nothing else.
        let (Event::Scalar(key, ..), start) = walk.next()? else { return None };
        if key == "items" {
            let at_line_start = start == 0 || text.as_bytes()[start - 1] == b'\n';
            if !at_line_start || !text[start..].starts_with("items:") {
                return None;
            }
            walk.expect(|e| matches!(e, Event::SequenceStart(StructureStyle::Block, 0, None)))?;
            walk.expect(|e| matches!(e, Event::MappingStart(StructureStyle::Block, 0, None)))?;
            return block::first_item(text, start + "items:".len());
        }
        let (Event::Scalar(..), _) = walk.next()? else { return None };
    }
}

/// The start of the first line after `from` that is a dash at `dash` spaces of indentation:
/// within the items, only the next item can start there (content is indented deeper, and a line
/// at the dash's column ends any block scalar or flow text before it).
pub(super) fn split_point(text: &str, dash: usize, from: usize) -> Option<usize> {
    // `from` may fall inside a character: look for the line break among the bytes.
    let mut from = from;
    while let Some(at) = text.as_bytes().get(from..)?.iter().position(|&b| b == b'\n').map(|at| from + at + 1) {
        let line = &text[at..];
        from = at;
        // A line whose first characters are not ASCII is not a dash at `dash` spaces.
        let Some(rest) = line.get(dash..) else { continue };
        if line.as_bytes()[..dash].iter().all(|b| *b == b' ') && (rest.starts_with("- ") || rest.starts_with("-\n")) {
            return Some(at);
        }
    }
    None
}

/// Items from `text` on (at `offset` in the input), a block list of its own: their places and
/// headers, where the list ends when a key follows it (`None` at the end of the document), and
/// whether an item's text could not be cut out (the last is left to the caller).
#[allow(clippy::type_complexity)]
pub(super) fn tail_items(text: &str, offset: usize) -> Option<(Vec<Spot>, Vec<Head>, Option<usize>, bool)> {
    let (mut spots, headers, end, cut_failed) = tail_items_here(text, offset)?;
    for spot in &mut spots {
        spot.moved(offset)?;
    }
    Some((spots, headers, end, cut_failed))
}

/// [`tail_items`], the places at their offsets in `text`.
#[allow(clippy::type_complexity)]
fn tail_items_here(text: &str, offset: usize) -> Option<(Vec<Spot>, Vec<Head>, Option<usize>, bool)> {
    let mut walk = Walk { events: Parser::new_from_str(text), text, keys: Vec::new() };
    walk.expect(|e| matches!(e, Event::StreamStart))?;
    walk.expect(|e| matches!(e, Event::DocumentStart(false, _)))?;
    walk.expect(|e| matches!(e, Event::SequenceStart(StructureStyle::Block, 0, None)))?;
    let (mut spots, mut headers, mut cut_failed) = (Vec::new(), Vec::new(), false);
    // After the last item: the end of the list, or (dashes at column 0) a parse error at the key
    // that follows it, which the whole document reads as its next key.
    let end_at_column_0 = |at: usize| (at > 0 && text.as_bytes()[at - 1] == b'\n').then_some(offset + at);
    loop {
        let event = match walk.events.next()? {
            Ok((event, span)) => (event, span.byte_range()?.start),
            Err(err) => {
                let at = err.marker().byte_offset()?;
                return Some((spots, headers, Some(end_at_column_0(at)?), cut_failed));
            }
        };
        match event {
            (Event::MappingStart(StructureStyle::Block, 0, None), start) => {
                let line = &text[text[..start].rfind('\n').map_or(0, |at| at + 1)..start];
                cut_failed |= !cut_last(text, &mut spots, start);
                spots.push(Spot::new(start, line.len() + 1)?);
                headers.push(Head::from(&walk.item()?));
            }
            (Event::SequenceEnd, _) => break,
            _ => return None,
        }
    }
    walk.expect(|e| matches!(e, Event::DocumentEnd))?;
    match walk.events.next()? {
        Ok((Event::StreamEnd, _)) => Some((spots, headers, None, cut_failed)),
        Err(err) => Some((spots, headers, Some(end_at_column_0(err.marker().byte_offset()?)?), cut_failed)),
        Ok(_) => None,
    }
}

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

struct Walk<'a> {
    events: Parser<'a, granit_parser::StrInput<'a>>,
    text: &'a str,
    /// Keys of the mappings being checked, innermost last (see [`Walk::check`]).
    keys: Vec<Cow<'a, str>>,
}

impl<'a> Walk<'a> {
    /// The next event and where it starts; `None` at a syntax error.
    fn next(&mut self) -> Option<(Event<'a>, usize)> {
        let (event, span) = self.events.next()?.ok()?;
        Some((event, span.byte_range()?.start))
    }

    /// The next key of a mapping and where it starts, `Some(None)` at the mapping's end, `None`
    /// for a key the full reader may read otherwise (see [`plain_text_key`]).
    fn next_key(&mut self) -> Option<Option<(Cow<'a, str>, usize)>> {
        match self.next()? {
            (Event::MappingEnd, _) => Some(None),
            (Event::Scalar(key, style, 0, None), start) if plain_text_key(&key, style) => Some(Some((key, start))),
            _ => None,
        }
    }

    fn expect(&mut self, test: impl Fn(&Event<'a>) -> bool) -> Option<()> {
        let (event, _) = self.next()?;
        test(&event).then_some(())
    }

    /// The block list of items: each a block mapping, its place and header kept, each but the
    /// last cut out of the text; `Some(false)` when one could not be cut.
    fn items(&mut self, spots: &mut Vec<Spot>, headers: &mut Vec<Head>) -> Option<bool> {
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
    fn item(&mut self) -> Option<Map> {
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
    fn build(&mut self, depth: usize) -> Option<Value> {
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
    fn matches(&mut self, value: &Value, depth: usize) -> Option<()> {
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
    fn check(&mut self, depth: usize) -> Option<()> {
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

/// The style a scalar is read by: its own when untagged; that of a quoted scalar when tagged
/// `!!str` or `!!binary`, which the full reader reads as their text (`doc::yaml`: a `!!binary`
/// scalar is kept as written, not decoded); `None` for other tags, left to the full reader.
pub(super) fn read_style(style: ScalarStyle, tag: Option<&Tag>) -> Option<ScalarStyle> {
    match tag {
        None => Some(style),
        Some(tag) if tag.handle() == "tag:yaml.org,2002:" && matches!(tag.suffix(), "str" | "binary") => {
            Some(if style == ScalarStyle::Plain { ScalarStyle::SingleQuoted } else { style })
        }
        Some(_) => None,
    }
}

/// A key the full reader takes as the same text: not a merge key, and when plain, a string.
pub(super) fn plain_text_key(key: &str, style: ScalarStyle) -> bool {
    key != "<<" && (style != ScalarStyle::Plain || matches!(resolve(key), Resolved::Text))
}

/// What the full reader makes of a plain scalar, when that is sure without asking it.
#[derive(Debug, PartialEq)]
enum Resolved {
    Null,
    Bool(bool),
    Text,
    /// Looks like a number: ask the full reader.
    Ask,
}

/// serde-saphyr with our options (`strict_booleans`, `legacy_octal_numbers`) reads nothing
/// but null, booleans, numbers and text from an untagged plain scalar. Sure: the empty text and
/// `~` are null, and text is text unless it is a word some YAML reads otherwise (in any case:
/// `Null`, `tRUE`, `yes`, `inf`…) or starts, after a sign, with a digit or a dot. The rest is asked.
fn resolve(text: &str) -> Resolved {
    const WORDS: [&str; 12] = ["null", "true", "false", "yes", "no", "on", "off", "y", "n", "inf", "nan", "infinity"];
    match text {
        "" | "~" => Resolved::Null,
        "true" => Resolved::Bool(true),
        "false" => Resolved::Bool(false),
        _ if text.len() <= 8
            && matches!(text.as_bytes()[0] | 0x20, b'n' | b't' | b'f' | b'y' | b'o' | b'i')
            && WORDS.iter().any(|word| text.eq_ignore_ascii_case(word)) =>
        {
            Resolved::Ask
        }
        _ => {
            let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
            match unsigned.bytes().next() {
                Some(b'0'..=b'9' | b'.') if number_like(unsigned) => Resolved::Ask,
                _ => Resolved::Text,
            }
        }
    }
}

/// Whether an unsigned scalar starting with a digit or a dot may be a number in some YAML
/// spelling (`0x1F`, `0o17`, `0b101`, `1_000`, `1e3`, `12:30`, `.inf`): quantities such as
/// `100m` and `128Mi` hold a letter no number has, and are text without asking.
fn number_like(unsigned: &str) -> bool {
    if let Some(word) = unsigned.strip_prefix('.') {
        if word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("nan") {
            return true;
        }
    }
    unsigned
        .bytes()
        .all(|b| b.is_ascii_hexdigit() || matches!(b, b'x' | b'X' | b'o' | b'O' | b'_' | b'.' | b':' | b'+' | b'-'))
}

/// Whether a scalar reads as `value` (see [`scalar`]), without building a value.
pub(super) fn scalar_is(text: &str, style: ScalarStyle, value: &Value) -> bool {
    if style != ScalarStyle::Plain {
        return value.as_str() == Some(text);
    }
    match resolve(text) {
        Resolved::Null => value.is_null(),
        Resolved::Bool(b) => value.as_bool() == Some(b),
        Resolved::Text => value.as_str() == Some(text),
        Resolved::Ask if value.is_object() || value.is_array() => false,
        Resolved::Ask => decimal(text).or_else(|| ask(text)).as_ref() == Some(value),
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

/// A scalar's value; `None` when only the full reader can say.
pub(super) fn scalar(value: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(value.into_owned()));
    }
    match resolve(&value) {
        Resolved::Null => Some(Value::Null),
        Resolved::Bool(b) => Some(Value::Bool(b)),
        Resolved::Text => Some(Value::String(value.into_owned())),
        Resolved::Ask => decimal(&value).or_else(|| ask(&value)),
    }
}

/// The common number spellings, read without asking: an optional minus and up to 18 decimal
/// digits without a leading zero, or a zero and up to 20 octal digits (YAML 1.1's `0644`, which
/// the full reader reads as octal: file modes in every Deployment's volumes).
fn decimal(text: &str) -> Option<Value> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if let Some(octal) = digits.strip_prefix('0').filter(|octal| !octal.is_empty()) {
        if octal.len() > 20 || !octal.bytes().all(|b| matches!(b, b'0'..=b'7')) {
            return None;
        }
        let magnitude = i64::from_str_radix(octal, 8).ok()?;
        return Some(if text.starts_with('-') { Value::from(-magnitude) } else { Value::from(magnitude as u64) });
    }
    let plain = !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit());
    if !plain {
        return None;
    }
    let number: i64 = text.parse().ok()?;
    // Unsigned when not negative, as the full reader visits it.
    Some(match u64::try_from(number) {
        Ok(unsigned) => Value::from(unsigned),
        Err(_) => Value::from(number),
    })
}

/// The full reader's value of a number-like plain scalar standing alone; `None` when it is not
/// one plain scalar on its own (whitespace, or it reads as a collection), or not a finite value.
fn ask(text: &str) -> Option<Value> {
    if text.contains(char::is_whitespace) || !finite(text) {
        return None;
    }
    // In a list: the reader takes a document of only a null-like word (`nULL`) for no document.
    let mut documents = crate::doc::read_yaml_documents_as::<Strict>(&format!("- {text}")).ok()?;
    match documents.pop() {
        Some(Strict(Value::Array(mut list))) if documents.is_empty() && list.len() == 1 => {
            list.pop().filter(|value| !value.is_object() && !value.is_array())
        }
        _ => None,
    }
}

/// Whether a plain scalar is not one the full reader reads as an infinite or NaN float (which it
/// refuses or turns into null): `.inf`, `.nan` in their spellings, or a literal that overflows.
pub(super) fn finite(text: &str) -> bool {
    if !matches!(resolve(text), Resolved::Ask) {
        return true;
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned.starts_with('.') {
        // Other spellings (`.iNf`, `-.nan`) are text (`doc::scalars`).
        return !crate::doc::defined_non_finite(text);
    }
    !(unsigned.starts_with(|c: char| c.is_ascii_digit()) && text.parse::<f64>().is_ok_and(f64::is_infinite))
}

/// The digit run past which an integer may not fit in 64 bits (the full reader checks those).
fn has_long_digit_run(text: &str) -> bool {
    const RUN: usize = 19;
    let bytes = text.as_bytes();
    // Any run of RUN digits covers one of every RUN consecutive positions: look at those, and
    // measure the run around each digit found there.
    let mut at = RUN - 1;
    while let Some(byte) = bytes.get(at) {
        if !byte.is_ascii_digit() {
            at += RUN;
            continue;
        }
        let start = bytes[..at].iter().rposition(|b| !b.is_ascii_digit()).map_or(0, |p| p + 1);
        let end = bytes[at..].iter().position(|b| !b.is_ascii_digit()).map_or(bytes.len(), |p| at + p);
        if end - start >= RUN {
            return true;
        }
        at = end + RUN;
    }
    false
}

/// The keys of one mapping, for the duplicate check.
#[derive(Default)]
pub(super) struct KeySet<'a> {
    few: Vec<Cow<'a, str>>,
    many: Option<std::collections::HashSet<Cow<'a, str>>>,
}

impl<'a> KeySet<'a> {
    /// Adds `key`; false when it was there.
    pub(super) fn insert(&mut self, key: Cow<'a, str>) -> bool {
        if let Some(many) = &mut self.many {
            return many.insert(key);
        }
        if self.few.contains(&key) {
            return false;
        }
        self.few.push(key);
        if self.few.len() > LINEAR_KEYS {
            self.many = Some(self.few.drain(..).collect());
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_digit_runs_are_found_wherever_they_are() {
        let naive = |text: &str| {
            let mut run = 0;
            text.bytes().any(|byte| {
                run = if byte.is_ascii_digit() { run + 1 } else { 0 };
                run >= 19
            })
        };
        let mut seed = 19u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..100_000 {
            // Digit runs of random lengths around 19, between other bytes.
            let (len, gap) = (next(80), 10 + next(20));
            let text: String =
                (0..len).map(|_| if next(gap) == 0 { 'x' } else { char::from(b'0' + next(10) as u8) }).collect();
            assert_eq!(has_long_digit_run(&text), naive(&text), "{text:?}");
        }
        assert!(has_long_digit_run("a: 1234567890123456789"));
        assert!(!has_long_digit_run("a: 123456789012345678 b: 123456789012345678"));
    }

    /// The full reader's value of a plain scalar, for comparison.
    fn full(text: &str) -> Option<Value> {
        let mut documents = crate::doc::read_yaml_documents_as::<Strict>(&format!("k: {text}\n")).ok()?;
        documents.pop()?.0.get("k").cloned()
    }

    #[test]
    fn plain_scalars_read_as_the_full_reader_reads_them() {
        let cases = [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "nULL",
            "true",
            "True",
            "TRUE",
            "tRUE",
            "false",
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "Y",
            "0644",
            "-0644",
            "+0644",
            "00",
            "-00",
            "007",
            "08",
            "0_644",
            "01234567012345670123",
            "012345670123456701234",
            "0777777777777777777777",
            "0",
            "-0",
            "+1",
            "1.50",
            "1e3",
            "1E3",
            "-1e-3",
            "0x1F",
            "0o17",
            "0b101",
            ".5",
            "-.5",
            "1_000",
            "12:30",
            "1.2.3",
            "10.0.0.1",
            "10.0.0.1:5000/img",
            "1/2",
            "inf",
            "nan",
            "Infinity",
            "-inf",
            "1.0.0-alpha",
            "3m",
            "100Mi",
            "0.5",
            "1e",
            "e1",
            "+",
            "-a",
            "+a",
            ".",
            "..",
            "._",
            "0.",
            "00",
            "08",
            "09",
            "-08",
            "0x",
            "0xZ",
            "1__2",
            "9223372036854775807",
            "18446744073709551615",
            "-9223372036854775808",
            "100m",
            "128Mi",
            "1h30m",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14",
            "1.0.0-rc1",
            "0x1g",
            "1 2",
            "12:30:00",
            "1e3",
            "0o17",
            "0b101",
            "1_000",
            ".5",
            "+.5",
            "-1.5E+3",
        ];
        for text in cases {
            let ours = scalar(Cow::Borrowed(text), ScalarStyle::Plain);
            if let Some(ours) = ours {
                assert_eq!(Some(ours), full(text), "{text:?}");
            }
        }
        // Sure answers are never asked.
        for text in
            ["web", "eu-west-1", "-a", "", "true", "registry.example.com/x:1.0", "nulls", "Yess", "100m", "128Mi"]
        {
            assert_ne!(resolve(text), Resolved::Ask, "{text:?}");
        }
    }

    #[test]
    fn non_finite_floats_are_left_to_the_full_reader() {
        for text in [".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1e999", "-9e400"] {
            assert!(!finite(text), "{text:?}");
        }
        for text in ["1e3", ".5", "inf", "nan", "web", "1.0"] {
            assert!(finite(text), "{text:?}");
        }
    }

    #[test]
    fn lazy_items_read_as_the_full_reader_reads_them() {
        let text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n  - apiVersion: v1\n    kind: \
                    ConfigMap\n    metadata:\n      name: x\n      labels: {a: '1', b: 2}\n    data:\n      k: |\n        \
                    line\n      o: 0644\n      f: 1.50\n  -   kind: B\n      x: 'y'\nfunctionConfig:\n  k: v\n";
        let parts = scan(text, None).expect("scanned");
        let Items::List(items, None) = parts.items else { panic!("no items") };
        let reference: Vec<Value> =
            crate::doc::read_yaml_documents(text).expect("read")[0]["items"].as_array().cloned().unwrap_or_default();
        assert_eq!(items.len(), reference.len());
        for (item, reference) in items.iter().zip(&reference) {
            assert!(item.unchanged_source().is_some());
            assert_eq!(item.header().get("metadata"), reference.get("metadata"));
            assert_eq!(&**item, reference);
        }
        assert_eq!(parts.function_config, Some(serde_json::json!({"k": "v"})));
    }

    #[test]
    fn what_it_cannot_prove_is_left_to_the_full_reader() {
        let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n";
        for items in [
            "  - a: &x 1\n    b: *x\n",
            "  - a: !!int 1\n",
            "  - a: !custom x\n",
            "  - <<: {a: 1}\n",
            "  - a: 1\n    a: 2\n",
            "  - a: .inf\n",
            "  - a: 12345678901234567890123\n",
            "  - 1: a\n",
            "  - null: a\n",
            "  - {a: 1}\n",
            "  - a\n",
            "  - a: |+\n      x\n\n",
            "  []\n",
        ] {
            assert!(scan(&format!("{head}{items}"), None).is_none(), "{items:?}");
        }
        assert!(scan(&format!("%YAML 1.2\n---\n{head}  - a: 1\n"), None).is_none());
        assert!(scan(&format!("{head}  - a: 1\n---\n{head}"), None).is_none());
    }

    /// A list large enough to split, in the layouts lists come in.
    fn big_list(dash: usize, after: &str) -> String {
        let pad = " ".repeat(dash);
        let mut text = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
        for i in 0..3000 {
            text.push_str(&format!(
                "{pad}- apiVersion: v1\n{pad}  kind: ConfigMap\n{pad}  metadata:\n{pad}    name: c{i}\n{pad}  data:\n\
                 {pad}    script: |\n{pad}      - not an item\n{pad}      echo {i}\n{pad}    num: \"{i}\"\n"
            ));
        }
        text.push_str(after);
        text
    }

    #[test]
    fn split_reading_finds_what_one_walk_finds() {
        for (dash, after) in [
            (0, ""),
            (2, ""),
            (0, "functionConfig:\n  k: v\n"),
            (2, "# done\nfunctionConfig:\n  k: [v]\nresults: []\n"),
            (4, "functionConfig:\n  k: v\n"),
        ] {
            let text = big_list(dash, after);
            let whole = top_level(&text, 0).unwrap_or_else(|| panic!("one walk {dash} {after:?} {}", &text[..400]));
            let split = split_scan(&text, true).unwrap_or_else(|| panic!("split {dash} {after:?}"));
            assert_eq!(split.spots, whole.spots);
            assert_eq!(split.headers, whole.headers);
            assert_eq!(split.parts.after_items, whole.parts.after_items);
            assert_eq!(split.parts.function_config, whole.parts.function_config);
            assert_eq!(split.parts.kind, whole.parts.kind);
        }
    }

    #[test]
    fn split_reading_reads_in_many_parts_and_cuts_what_one_walk_cuts() {
        let text = big_list(2, "functionConfig:\n  k: v\n");
        assert!(text.len() / PART_BYTES > 4, "{}", text.len());
        let whole = top_level(&text, 0).expect("one walk");
        let split = split_scan(&text, true).expect("split");
        // Every item but the last is cut while walking, the same on either reading.
        assert!(whole.spots[..whole.spots.len() - 1].iter().all(|spot| spot.cut.is_some()));
        assert_eq!(split.spots, whole.spots);
        assert!(!split.cut_failed);
        // An item that keeps its trailing blank lines (`|+`) cannot be cut, in whichever part.
        for at in [text.len() / 3, text.len() / 2] {
            let mut text = text.clone();
            let script = at + text[at..].find("script: |").expect("a script") + "script: |".len();
            text.insert(script, '+');
            let split = split_scan(&text, true).expect("split");
            assert!(split.cut_failed);
            assert_eq!(split.spots, top_level(&text, 0).expect("one walk").spots);
            assert!(scan(&text, None).is_none());
        }
    }

    #[test]
    fn the_split_may_start_inside_a_character() {
        // The middle byte (4) is inside the second `é`.
        assert_eq!(split_point("a\néé\n- b\n", 0, 4), Some(7));
        assert_eq!(split_point("a\nééé\n", 0, 4), None);
        // A list of 256 KiB or more whose middle byte is inside a character (it panicked, exit
        // 101; no golden fixture: tests/locate.rs takes minutes on a file this size).
        let item =
            |i: usize| format!("- kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n    g: grüße aus köln\n");
        let text = (0..)
            .map(|n| format!("kind: ResourceList\nitems:\n{}", (0..3000 + n).map(item).collect::<String>()))
            .find(|text| !text.is_char_boundary(text.len() / 2))
            .unwrap_or_default();
        assert!(text.len() >= SPLIT_BYTES);
        assert!(split_scan(&text, true).is_some());
    }

    #[test]
    fn split_reading_leaves_what_it_cannot_prove_to_one_walk() {
        // Two documents, a duplicate key after the list, a list indented less than its dashes.
        for after in ["---\nkind: X\n", "kind: Again\n", " x: 1\n", "items: []\n"] {
            let text = big_list(2, after);
            assert!(split_scan(&text, true).is_none(), "{after:?}");
        }
        let text = big_list(0, "").replace("items:\n", "functionConfig: {}\nitems:\n");
        assert!(split_scan(&text, true).is_none());
        // A document end marker before an item: a part would end its document there.
        let mut text = big_list(0, "");
        let at = text.len() / 2 + text[text.len() / 2..].find("\n- ").expect("an item") + 1;
        text.insert_str(at, "...\n");
        assert!(split_scan(&text, true).is_none());
        assert!(top_level(&text, 0).is_none());
    }
}
