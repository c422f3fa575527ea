//! Cutting an item's text out of a list: where an element starts and ends, whether its text
//! stands alone once moved to column 0 (no anchors tying it elsewhere, no line less indented
//! than it), and moving it there. The readers cut items while they walk ([`Spot`]); the writer
//! copies what was cut. A leaf: text in, text out.

use granit_parser::{Event, Parser};

/// Where an item is in the input: the byte offset where its mapping starts and its column
/// (1-based), and its text as [`item_cut`] cuts it (start, end), once the walk has seen
/// where the next item starts. Cutting while walking reads the item's bytes while they are still
/// in the cache, on the thread that walked them, instead of in a pass of its own afterwards.
/// Offsets fit: [`scan`] leaves inputs over 64 MiB to the full reader.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spot {
    pub(super) start: u32,
    pub(super) column: u32,
    pub(super) cut: Option<(u32, u32)>,
}

impl Spot {
    pub(super) fn new(start: usize, column: usize) -> Option<Spot> {
        Some(Spot { start: u32::try_from(start).ok()?, column: u32::try_from(column).ok()?, cut: None })
    }

    /// The item's text cut out of `text` and moved to column 0, once cut (tests).
    #[cfg(test)]
    pub(super) fn standalone(&self, text: &str) -> Option<String> {
        let (start, end) = self.cut?;
        Some(moved_left(text.get(start as usize..end as usize)?, (self.column as usize).checked_sub(1)?))
    }

    /// The spot at `offset` bytes later.
    pub(super) fn moved(&mut self, offset: usize) -> Option<()> {
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
    let cut = item_cut(text, spot.start as usize, next, spot.column as usize, false);
    spot.cut = cut.and_then(|(start, end, _)| Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?)));
    spot.cut.is_some()
}

/// Where one block-list item's text is: `(start, end, indent)`, its end trimmed and its text
/// checked to stand alone once moved `indent` columns left; see [`attach_sources`].
///
/// Only what can never be content is cut off: the next element's dash, blank lines at the end
/// (kept when a `|+` block scalar may own them), and document markers after the last item. Whitespace at the end of a line is kept (in a block
/// scalar it is content, and YAML's own whitespace is only spaces and tabs: `trim_end` would also
/// take a no-break space), and so is a line of spaces deeper than the item (a block scalar's
/// content line when the scalar reaches it).
pub(super) fn item_cut(
    text: &str,
    start: usize,
    end: usize,
    column: usize,
    last: bool,
) -> Option<(usize, usize, usize)> {
    let indent = column.checked_sub(1)?;
    let start = element_start(text, start);
    let end = if last { end } else { element_start(text, end) };
    // A block list element: spaces, a dash and spaces before the item on its line.
    let before = text.get(..start)?;
    let dash_line = &before[before.rfind('\n').map_or(0, |at| at + 1)..];
    if !dash_line.trim_start_matches(' ').strip_prefix('-')?.bytes().all(|b| b == b' ') {
        return None;
    }
    let mut slice = text.get(start..end)?;
    if last {
        // Nothing after the list but document markers may follow.
        if let Some(at) = document_marker(slice) {
            slice = &slice[..at];
        }
        // Without its last line break, as an element cut before the next one's dash, so that
        // what is trimmed after its last line is blank lines only (see `standalone_len`).
        slice = slice.strip_suffix('\n').map_or(slice, |body| body.strip_suffix('\r').unwrap_or(body));
    } else {
        // Up to the next element's dash, which stands alone at the start of its line.
        let (body, dash_indent) = slice.trim_end_matches(' ').strip_suffix('-')?.rsplit_once('\n')?;
        if !dash_indent.bytes().all(|b| b == b' ') {
            return None;
        }
        slice = body;
    }
    let len = standalone_len(slice, indent)?;
    Some((start, start + len, indent))
}

/// Where a list element whose mapping starts at `start` begins: at `start`, or, when the mapping
/// starts on a line of its own (kpt writes a file's first comment onto the dash line: `- # …`),
/// after the dash and one space before that comment, or right after a dash with nothing else
/// on its line. Only comment lines may lie between that dash and the mapping; anything else
/// keeps `start`, and the cut then fails as before.
fn element_start(text: &str, start: usize) -> usize {
    let Some(before) = text.get(..start) else { return start };
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    if line_start == 0 || !before[line_start..].bytes().all(|b| b == b' ') {
        return start;
    }
    let mut line_end = line_start - 1;
    loop {
        let line_start = before[..line_end].rfind('\n').map_or(0, |at| at + 1);
        let line = &before[line_start..line_end];
        let content = line.trim_start_matches(' ');
        if content.starts_with('#') {
            if line_start == 0 {
                return start;
            }
            line_end = line_start - 1;
            continue;
        }
        let Some(after_dash) = content.strip_prefix('-') else { return start };
        let comment = after_dash.trim_start_matches(' ');
        return match (after_dash.is_empty(), comment.starts_with('#') && comment.len() < after_dash.len()) {
            (true, _) => line_end,
            // After the dash's first space, so the spaces before the comment stay.
            (false, true) => line_end - after_dash.len() + 1,
            (false, false) => start,
        };
    }
}

/// The text of one item cut out of a list with [`item_cut`], moved to column 0.
pub(super) fn item_source(text: &str, start: usize, end: usize, column: usize, last: bool) -> Option<String> {
    let (start, end, indent) = item_cut(text, start, end, column, last)?;
    Some(moved_left(&text[start..end], indent))
}

/// The text of one node cut out of a YAML document (a list item, or a whole document at
/// `indent` 0), moved `indent` columns left, when it can stand alone as its own document: `None`
/// when it may be tied to text elsewhere (anchors and aliases), holds a line break YAML sees and
/// the line-based mover does not (a carriage return alone), or has a line less indented than
/// `indent` that is not a comment. Blank lines at the end are left out, unless the node holds a
/// block scalar that keeps its trailing lines (`|+`): they may be that scalar's.
pub fn standalone_source(slice: &str, indent: usize) -> Option<String> {
    standalone_len(slice, indent).map(|len| moved_left(&slice[..len], indent))
}

/// How much of `slice` is the node, when it can stand alone (see [`standalone_source`]).
pub(super) fn standalone_len(slice: &str, indent: usize) -> Option<usize> {
    let (whole, all) = (slice.len(), slice);
    let mut slice = slice;
    // Lines at the end that hold nothing, or no more spaces than the item's indentation: never
    // content (a block scalar in the item is indented deeper), only the end of one.
    while let Some((body, line)) = slice.rsplit_once('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.len() > indent || line.bytes().any(|b| b != b' ') {
            break;
        }
        slice = body;
    }
    // A block scalar that keeps its trailing blank lines (`|+`) may own the lines just trimmed:
    // then they stay part of the node, which reads alone as it reads in its list. (Its last
    // line's break is not one: the caller leaves it out, and the writer puts one after every
    // element.)
    if slice.len() < whole && memchr::memchr_iter(b'+', slice.as_bytes()).any(|at| keeps_at(slice.as_bytes(), at)) {
        slice = all;
    }
    let slice = slice.strip_suffix('\r').unwrap_or(slice);
    // This runs on every item of every list: vectorized searches for the few bytes that
    // matter, not a pass that looks at every byte.
    let bytes = slice.as_bytes();
    let previous = |at: usize| at.checked_sub(1).and_then(|at| bytes.get(at)).copied().unwrap_or(b'\n');
    // Anchors and aliases tie an item to text elsewhere; tags and the rest stand alone. A `&` or
    // `*` where one may begin is often neither (`# a & b`, `cmd && run`, `"5 10 * * 1"`): the
    // parser decides, after the searches.
    let maybe_tied = memchr::memchr2_iter(b'&', b'*', bytes).any(|at| {
        let previous = previous(at);
        previous.is_ascii_whitespace() || matches!(previous, b'[' | b'{' | b',' | b'-' | b':' | b'?')
    });
    // A carriage return alone breaks a line for YAML and for nothing below.
    if memchr::memchr_iter(b'\r', bytes).any(|at| bytes.get(at + 1) != Some(&b'\n')) {
        return None;
    }
    for at in memchr::memchr_iter(b'\n', bytes) {
        // A line less indented than the item must be blank or a comment.
        let spaces = bytes[at + 1..].iter().take(indent).take_while(|&&b| b == b' ').count();
        if spaces < indent && !matches!(bytes.get(at + 1 + spaces), None | Some(b'\n' | b'\r' | b'#')) {
            return None;
        }
        // A line at the item's own column that starts with `---` or `...` and a blank is text in
        // the list, and a document marker once the item is moved to column 0.
        if indent > 0 && spaces == indent && starts_with_marker(&bytes[at + 1 + spaces..]) {
            return None;
        }
    }
    if maybe_tied && uses_anchors(&moved_left(slice, indent)) {
        return None;
    }
    Some(slice.len())
}

/// Whether the `+` at `at` is a block scalar's keep indicator (`|+`, `>+`, `|2+`), or may be.
fn keeps_at(bytes: &[u8], at: usize) -> bool {
    let before = |back: usize| at.checked_sub(back).and_then(|at| bytes.get(at)).copied();
    matches!(before(1), Some(b'|' | b'>'))
        || (before(1).is_some_and(|b| b.is_ascii_digit()) && matches!(before(2), Some(b'|' | b'>')))
}

/// Whether YAML text defines an anchor or uses an alias (text the parser refuses counts as
/// tied: the caller then reads it with its list).
pub(super) fn uses_anchors(text: &str) -> bool {
    Parser::new_from_str(text).any(|event| match event {
        Ok((Event::Alias(_) | Event::UnresolvedAlias(_), _)) => true,
        Ok((
            Event::Scalar(_, _, anchor, _) | Event::MappingStart(_, anchor, _) | Event::SequenceStart(_, anchor, _),
            _,
        )) => anchor != 0,
        Ok(_) => false,
        Err(_) => true,
    })
}

/// `text` with every line after the first moved `indent` columns left (fewer when it has fewer
/// leading spaces), ending in a line break.
pub(super) fn moved_left(text: &str, indent: usize) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
            let spaces = line.len() - line.trim_start_matches(' ').len();
            out.push_str(&line[spaces.min(indent)..]);
        } else {
            out.push_str(line);
        }
    }
    out.push('\n');
    out
}

/// Where the first document marker (`---` or `...` at the start of a line, then whitespace or
/// the end) in `slice` begins, counting from the line break before it.
pub fn document_marker(slice: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = slice[from..].find('\n').map(|at| from + at) {
        if starts_with_marker(&slice.as_bytes()[at + 1..]) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Whether `line` (the rest of a line from its start) starts with a document marker: `---` or
/// `...` and whitespace or the end.
pub(super) fn starts_with_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"..."))
        && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}
