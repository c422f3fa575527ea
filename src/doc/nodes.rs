//! One walk over a YAML stream's nodes, each with its document, its path from the document's
//! root and where it (and its key) is written. The value model keeps no positions and no
//! styles, so the two questions about how something is written in the text, where a field is
//! ([`super::locate`]) and which scalars were quoted ([`quoted_template_scalars`]), each
//! walk the parser's events (granit-parser, the parser under serde-saphyr) through this.
//!
//! Documents are numbered as the reader numbers them: empty and null documents are skipped. A
//! key that is itself a mapping or list (`? {a: 1}`) is the path segment `?`, which no field
//! path names. At a syntax error the walk ends with what it read.

use super::path::Segment;
use granit_parser::{Event, Marker, Parser, ScalarStyle};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// A node of the stream, as [`walk`] hands it over.
pub(super) struct Node<'a> {
    /// Which document, counting only those that are not empty or null.
    pub document: usize,
    /// From the document's root; empty for the root.
    pub path: &'a [Segment],
    /// Where the node starts.
    pub at: Marker,
    /// Where its key is written, in a mapping.
    pub key_at: Option<Marker>,
    /// Its text and style, for a scalar.
    pub scalar: Option<(&'a str, ScalarStyle)>,
    /// The parser's id of the anchor it defines (`&a`), 0 for none; ids are unique in a stream.
    pub anchor: usize,
    /// For an alias (`*a`), the id of the anchor it names.
    pub alias: Option<usize>,
}

enum Frame {
    Map(Entry),
    Seq,
}

/// Where a mapping is in its current entry.
enum Entry {
    /// Waiting for a key.
    Key,
    /// A key was read (written at the marker; its segment is on the path): its value is next.
    Value(Marker),
    /// Inside a key that is a collection, written at the marker.
    ComplexKey(Marker),
}

/// Hands every node of `text` but the keys to `visit`, in the order they are written, until it
/// breaks.
pub(super) fn walk(text: &str, mut visit: impl FnMut(&Node) -> ControlFlow<()>) {
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<Segment> = Vec::new();
    let mut documents = 0usize;
    // Inside a null document's root: nothing to visit until the next document.
    let mut skipping = false;
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { return };
        let scalar = match &event {
            Event::Scalar(value, style, ..) => Some((value.as_ref(), *style)),
            _ => None,
        };
        let collection = matches!(event, Event::MappingStart(..) | Event::SequenceStart(..));
        if scalar.is_some() || collection || matches!(event, Event::Alias(_)) {
            // A key of a mapping: it goes on the path, and its value is the next node.
            if let Some(Frame::Map(entry @ Entry::Key)) = stack.last_mut() {
                path.push(Segment::Key(scalar.map_or("?", |(value, _)| value).to_string()));
                if collection {
                    // Walked (its nodes have no field path), never visited.
                    *entry = Entry::ComplexKey(span.start);
                    push(&mut stack, &mut path, &event);
                } else {
                    *entry = Entry::Value(span.start);
                }
                continue;
            }
            if stack.is_empty() {
                skipping = matches!(scalar, Some((value, ScalarStyle::Plain))
                    if ["", "~", "null", "Null", "NULL"].contains(&value));
                documents += usize::from(!skipping);
            }
            let in_key = stack.iter().any(|frame| matches!(frame, Frame::Map(Entry::ComplexKey(_))));
            if !skipping && !in_key {
                let key_at = match stack.last() {
                    Some(Frame::Map(Entry::Value(key))) => Some(*key),
                    _ => None,
                };
                let anchor = match &event {
                    Event::Scalar(_, _, anchor, _)
                    | Event::MappingStart(_, anchor, _)
                    | Event::SequenceStart(_, anchor, _) => *anchor,
                    _ => 0,
                };
                let alias = match event {
                    Event::Alias(id) => Some(id),
                    _ => None,
                };
                let node = Node { document: documents - 1, path: &path, at: span.start, key_at, scalar, anchor, alias };
                if visit(&node).is_break() {
                    return;
                }
            }
        }
        match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => push(&mut stack, &mut path, &event),
            Event::MappingEnd | Event::SequenceEnd => {
                if matches!(stack.pop(), Some(Frame::Seq)) {
                    path.pop();
                }
                match stack.last_mut() {
                    // A key that is a collection ended: its value is next.
                    Some(Frame::Map(entry @ Entry::ComplexKey(_))) => {
                        if let Entry::ComplexKey(at) = *entry {
                            *entry = Entry::Value(at);
                        }
                    }
                    _ => advance(&mut stack, &mut path),
                }
            }
            Event::Scalar(..) | Event::Alias(_) => advance(&mut stack, &mut path),
            _ => {}
        }
    }
}

fn push(stack: &mut Vec<Frame>, path: &mut Vec<Segment>, event: &Event) {
    if matches!(event, Event::SequenceStart(..)) {
        stack.push(Frame::Seq);
        path.push(Segment::Index(0));
    } else {
        stack.push(Frame::Map(Entry::Key));
    }
}

/// A value was read: the enclosing mapping waits for its next key, a sequence moves on.
fn advance(stack: &mut [Frame], path: &mut Vec<Segment>) {
    match stack.last_mut() {
        Some(Frame::Map(entry)) => {
            if matches!(entry, Entry::Value(_)) {
                path.pop();
            }
            *entry = Entry::Key;
        }
        Some(Frame::Seq) => {
            if let Some(Segment::Index(index)) = path.last_mut() {
                *index += 1;
            }
        }
        None => {}
    }
}

/// Per document, the JSON pointers (from the document root) of non-plain scalars holding `$` or
/// a KOTS template (`repl{{`, `{{repl`), and of the places an alias (`*a`) copies one to.
///
/// Flux substitutes variables in a resource's YAML *text*, and KOTS renders its templates in the
/// text, so `replicas: ${n}` or `replicas: repl{{ … }}` becomes a number while `value: "${PORT}"`
/// stays a string; typing the same way on parsed values needs the style, which the value model
/// drops. Only such scalars are recorded, so the result stays small, and a text without any is
/// not walked.
///
/// An alias is its anchor's node: kustomize writes it expanded with the anchored node's style,
/// so `b: *a` after `a: &a "${v}"` is a quoted string there, and here. An alias in a merge key
/// (`<<: *m`) copies its mapping's entries into the mapping that holds it.
pub fn quoted_template_scalars(text: &str) -> Vec<HashSet<String>> {
    let mut documents: Vec<HashSet<String>> = Vec::new();
    if !(text.contains('$') || text.contains("repl{{") || text.contains("{{repl")) {
        return documents;
    }
    // By anchor id: the pointers below the anchored node (relative, `""` for the node itself).
    let mut anchored: HashMap<usize, Vec<String>> = HashMap::new();
    // Anchored collections the walk is inside: id, path length, pointer.
    let mut open: Vec<(usize, usize, String)> = Vec::new();
    walk(text, |node| {
        // Every document that is not empty or null has its root visited, so each gets a set.
        if documents.len() <= node.document {
            documents.resize_with(node.document + 1, HashSet::new);
            open.clear();
        }
        // Nodes come in the order written: a node no deeper than an open collection is after it.
        while open.last().is_some_and(|(_, depth, _)| node.path.len() <= *depth) {
            open.pop();
        }
        let quoted = node.scalar.is_some_and(|(value, style)| {
            style != ScalarStyle::Plain && (value.contains('$') || value.contains("repl{{") || value.contains("{{repl"))
        });
        // What this node puts in place, relative to `base` segments of its path.
        let (base, found): (usize, &[String]) = match node.alias.and_then(|id| anchored.get(&id)) {
            Some(copied) => (merged_into(node.path), copied),
            None if quoted => (node.path.len(), &[String::new()]),
            None => (node.path.len(), &[]),
        };
        if found.is_empty() && (node.anchor == 0 || node.scalar.is_some()) {
            return ControlFlow::Continue(());
        }
        let at = pointer(&node.path[..base]);
        let found: Vec<String> = found.iter().map(|below| format!("{at}{below}")).collect();
        for (id, _, anchor_at) in &open {
            let below = found.iter().filter_map(|pointer| pointer.strip_prefix(anchor_at.as_str()));
            anchored.entry(*id).or_default().extend(below.map(str::to_string));
        }
        if node.anchor != 0 {
            let below = found.iter().filter_map(|pointer| pointer.strip_prefix(at.as_str())).map(str::to_string);
            anchored.insert(node.anchor, below.collect());
            if node.scalar.is_none() && node.alias.is_none() {
                open.push((node.anchor, node.path.len(), at));
            }
        }
        documents[node.document].extend(found);
        ControlFlow::Continue(())
    });
    documents
}

/// How many segments of an alias's path its copy goes under: the mapping's, for an alias in a
/// merge key (`<<: *m` or `<<: [*m, *n]`), else the alias's own.
fn merged_into(path: &[Segment]) -> usize {
    let is_merge = |segment: Option<&Segment>| matches!(segment, Some(Segment::Key(key)) if key == "<<");
    match path {
        [.., last] if is_merge(Some(last)) => path.len() - 1,
        [.., merge, Segment::Index(_)] if is_merge(Some(merge)) => path.len() - 2,
        _ => path.len(),
    }
}

/// The JSON pointer of a path.
fn pointer(path: &[Segment]) -> String {
    let mut pointer = String::new();
    for segment in path {
        pointer.push('/');
        match segment {
            Segment::Key(key) => pointer.push_str(&super::pointer_segment(key)),
            Segment::Index(index) => pointer.push_str(&index.to_string()),
        }
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visited(text: &str) -> Vec<(usize, String, Option<String>)> {
        let mut out = Vec::new();
        walk(text, |node| {
            let path: Vec<String> = node
                .path
                .iter()
                .map(|segment| match segment {
                    Segment::Key(key) => key.clone(),
                    Segment::Index(index) => index.to_string(),
                })
                .collect();
            out.push((node.document, path.join("/"), node.scalar.map(|(value, _)| value.to_string())));
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn nodes_come_with_their_paths_and_documents() {
        let text = "# comment only\n---\n~\n---\na: [x, {b: y}]\nc: z\n";
        let want = vec![
            (0, "".to_string(), None),
            (0, "a".to_string(), None),
            (0, "a/0".to_string(), Some("x".to_string())),
            (0, "a/1".to_string(), None),
            (0, "a/1/b".to_string(), Some("y".to_string())),
            (0, "c".to_string(), Some("z".to_string())),
        ];
        assert_eq!(visited(text), want);
    }

    #[test]
    fn a_key_that_is_a_collection_is_walked_but_not_visited() {
        let text = "? {a: 1}\n: b\nc: d\n";
        let want = vec![
            (0, "".to_string(), None),
            (0, "?".to_string(), Some("b".to_string())),
            (0, "c".to_string(), Some("d".to_string())),
        ];
        assert_eq!(visited(text), want);
    }

    #[test]
    fn finds_quoted_dollar_scalars_by_pointer() {
        let text = "# only a comment\n---\na: ${plain}\nb: \"${quoted}\"\nc:\n- '${single}'\n- ${p}\n- |\n  ${block}\nd: {e: \"$x\", f: $y}\n---\nz: \"${z}\"\n";
        let docs = quoted_template_scalars(text);
        let first: HashSet<String> = ["/b", "/c/0", "/c/2", "/d/e"].iter().map(|s| s.to_string()).collect();
        assert_eq!(docs, vec![first, ["/z".to_string()].into_iter().collect()]);
    }

    #[test]
    fn an_alias_of_a_quoted_template_is_quoted_where_it_is_copied() {
        let text = "a: &a \"${v}\"\nb: *a\nl: &l\n- '${w}'\n- ${p}\n- &i \"$i\"\nc: *l\nd: *i\n\
                    m: &m {k: \"${k}\", n: &n {j: \"$j\"}}\ne:\n  <<: *m\nf: {<<: [*n]}\ng: &g x\nh: *g\n";
        let docs = quoted_template_scalars(text);
        let want: HashSet<String> =
            ["/a", "/b", "/l/0", "/l/2", "/c/0", "/c/2", "/d", "/m/k", "/m/n/j", "/e/k", "/e/n/j", "/f/j"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(docs, vec![want]);
    }
}
