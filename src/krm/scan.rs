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
use super::cut::{cut_last, item_cut, moved_left, Spot};
use super::head::Head;
use super::item::{Item, Source};
use super::rules::{has_long_digit_run, KeySet};
use super::stream::{Items, Parts};
use super::threads::two_cores;
use super::walk::Walk;

use granit_parser::{Event, Parser, ScalarStyle, StructureStyle};

use std::sync::Arc;

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

/// Reads `text` as a ResourceList with lazily built items, or `None` to leave it to the full
/// reader (anything unusual, and every error).
pub fn scan(text: &str, shared: Option<&Arc<String>>) -> Option<Parts> {
    // Directives change how the rest reads; a long digit run may be an integer the full reader
    // refuses; past its scalar budget (64 MiB of scalar text) it refuses the input.
    if text.len() > 64 << 20 || text.starts_with('%') || text.contains("\n%") || has_long_digit_run(text) {
        return None;
    }
    let threads = text.len() >= SPLIT_BYTES && two_cores();
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
                let (start, end, _) = item_cut(text, spot.start as usize, next, spot.column as usize, last)?;
                (start, end)
            }
        };
        let indent = (spot.column as usize).checked_sub(1)?;
        item.attach(match shared {
            Some(input) => Source::cut(input, start, end, indent),
            None => Source::Own(moved_left(text.get(start..end)?, indent).into_boxed_str()),
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
        let Part::Items(Some(Run { spots, headers, end, cut_failed })) = part else { return None };
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
fn list_part(text: &str, start: usize, end: usize, dash: usize) -> Option<Run> {
    let part = text.get(start..end)?;
    let block::Read { mut spots, mut headers, mut cut_failed, stop } = block::items(part, dash);
    for spot in &mut spots {
        spot.moved(start)?;
    }
    match stop {
        block::Stop::End(end) => Some(Run { spots, headers, end: end.map(|end| start + end), cut_failed }),
        block::Stop::At(at) => {
            let more = tail_items(part.get(at..)?, start + at)?;
            let joined = append(text, (&mut spots, &mut headers), more.spots, more.headers)?;
            cut_failed |= more.cut_failed || !joined;
            Some(Run { spots, headers, end: more.end, cut_failed })
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
    Items(Option<Run>),
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

/// Items read from one stretch of the list: their places and headers, where the list ends when
/// a key follows it (`None` when it runs on to the stretch's or the document's end), and
/// whether an item's text could not be cut out (the last is left to the caller).
pub(super) struct Run {
    pub(super) spots: Vec<Spot>,
    pub(super) headers: Vec<Head>,
    pub(super) end: Option<usize>,
    pub(super) cut_failed: bool,
}

/// Items from `text` on (at `offset` in the input), a block list of its own (see [`Run`]).
pub(super) fn tail_items(text: &str, offset: usize) -> Option<Run> {
    let mut run = tail_items_here(text, offset)?;
    for spot in &mut run.spots {
        spot.moved(offset)?;
    }
    Some(run)
}

/// [`tail_items`], the places at their offsets in `text`.
fn tail_items_here(text: &str, offset: usize) -> Option<Run> {
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
                return Some(Run { spots, headers, end: Some(end_at_column_0(at)?), cut_failed });
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
        Ok((Event::StreamEnd, _)) => Some(Run { spots, headers, end: None, cut_failed }),
        Err(err) => Some(Run { spots, headers, end: Some(end_at_column_0(err.marker().byte_offset()?)?), cut_failed }),
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Value;

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
        // An item that keeps its trailing blank lines (`|+`) is cut, with the blank lines that
        // follow it (they may be that block scalar's), in whichever part.
        for at in [text.len() / 3, text.len() / 2] {
            let mut text = text.clone();
            let script = at + text[at..].find("script: |").expect("a script") + "script: |".len();
            text.insert(script, '+');
            let split = split_scan(&text, true).expect("split");
            assert!(!split.cut_failed);
            assert_eq!(split.spots, top_level(&text, 0).expect("one walk").spots);
            let next = script + text[script..].find("\n  - apiVersion").expect("a next item") + 1;
            text.insert(next, '\n');
            let split = split_scan(&text, true).expect("split");
            assert!(!split.cut_failed);
            assert_eq!(split.spots, top_level(&text, 0).expect("one walk").spots);
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
