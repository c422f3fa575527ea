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
use std::collections::HashSet;
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
                let node = Node { document: documents - 1, path: &path, at: span.start, key_at, scalar };
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
/// a KOTS template (`repl{{`, `{{repl`).
///
/// Flux substitutes variables in a resource's YAML *text*, and KOTS renders its templates in the
/// text, so `replicas: ${n}` or `replicas: repl{{ … }}` becomes a number while `value: "${PORT}"`
/// stays a string; typing the same way on parsed values needs the style, which the value model
/// drops. Only such scalars are recorded, so the result stays small, and a text without any is
/// not walked.
pub fn quoted_template_scalars(text: &str) -> Vec<HashSet<String>> {
    let mut documents: Vec<HashSet<String>> = Vec::new();
    if !(text.contains('$') || text.contains("repl{{") || text.contains("{{repl")) {
        return documents;
    }
    walk(text, |node| {
        // Every document that is not empty or null has its root visited, so each gets a set.
        if documents.len() <= node.document {
            documents.resize_with(node.document + 1, HashSet::new);
        }
        if let Some((value, style)) = node.scalar {
            if style != ScalarStyle::Plain
                && (value.contains('$') || value.contains("repl{{") || value.contains("{{repl"))
            {
                let mut pointer = String::new();
                for segment in node.path {
                    pointer.push('/');
                    match segment {
                        Segment::Key(key) => pointer.push_str(&super::pointer_segment(key)),
                        Segment::Index(index) => pointer.push_str(&index.to_string()),
                    }
                }
                documents[node.document].insert(pointer);
            }
        }
        ControlFlow::Continue(())
    });
    documents
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
}
