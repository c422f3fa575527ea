//! Where a field is written in the source text. The value model keeps no positions (carrying a
//! span on every node would cost memory on every run), so when the CLI reports a problem at a
//! field path it reads the file again and walks the parser's events (granit-parser, the parser
//! under serde-saphyr) to the field. Only the failing path pays for this.

use super::path::Segment;
use super::FieldPath;
use granit_parser::{Event, Marker, Parser, ScalarStyle};

/// A 1-based line and column in the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

impl From<Marker> for Position {
    fn from(marker: Marker) -> Self {
        Self { line: marker.line() as u64, column: marker.col() as u64 + 1 }
    }
}

enum Frame {
    /// The key being read (with where it was written), or `None` while waiting for one.
    Map(Option<(String, Marker)>),
    Seq(usize),
}

/// The position of `field` in the `document`-th document of `text` (counting as the reader does:
/// empty and null documents are skipped). A mapping entry is reported at its value when that
/// starts on the key's line (`when: a ==` points at the expression), otherwise at its key. When
/// the path does not exist in the text (a default, a derived field) the deepest existing parent is
/// reported, so a caller always gets the closest place that is written down.
pub fn locate(text: &str, document: usize, field: &FieldPath) -> Option<Position> {
    let target = field.segments();
    let mut documents = 0usize;
    // Inside the document asked for; other documents are walked only to find where they end.
    let mut ours = false;
    let mut stack: Vec<Frame> = Vec::new();
    // How many leading segments of the target are found so far, and where the last one is.
    let mut best: Option<(usize, Position)> = None;
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        let starts_node =
            matches!(event, Event::Scalar(..) | Event::Alias(_) | Event::MappingStart(..) | Event::SequenceStart(..));
        if starts_node && stack.is_empty() {
            // A document's root: null documents are skipped, as the reader skips them.
            let null = matches!(&event, Event::Scalar(value, ScalarStyle::Plain, ..)
                if ["", "~", "null", "Null", "NULL"].contains(&&**value));
            if null {
                continue;
            }
            documents += 1;
            ours = documents - 1 == document;
            if ours {
                best = Some((0, span.start.into()));
                if target.is_empty() {
                    break;
                }
            }
        } else if ours && starts_node {
            // A key of a mapping: remember it and where it is.
            if let (Some(Frame::Map(key @ None)), Event::Scalar(value, ..)) = (stack.last_mut(), &event) {
                *key = Some((value.to_string(), span.start));
                continue;
            }
            let depth = stack.len();
            let matches = depth <= target.len()
                && best.is_some_and(|(matched, _)| matched + 1 == depth)
                && match (stack.last(), &target[depth - 1]) {
                    (Some(Frame::Map(Some((key, _)))), Segment::Key(wanted)) => key == wanted,
                    (Some(Frame::Seq(index)), Segment::Index(wanted)) => index == wanted,
                    _ => false,
                };
            if matches {
                let position = match stack.last() {
                    Some(Frame::Map(Some((_, key)))) if key.line() != span.start.line() => (*key).into(),
                    _ => span.start.into(),
                };
                best = Some((depth, position));
                if depth == target.len() {
                    break;
                }
            }
        }
        match event {
            Event::MappingStart(..) => stack.push(Frame::Map(None)),
            Event::SequenceStart(..) => stack.push(Frame::Seq(0)),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                advance(&mut stack);
            }
            Event::Scalar(..) | Event::Alias(_) => advance(&mut stack),
            _ => {}
        }
        if ours && stack.is_empty() {
            break;
        }
    }
    best.map(|(_, position)| position)
}

/// A value was read: the enclosing mapping waits for its next key, a sequence moves on.
fn advance(stack: &mut [Frame]) {
    match stack.last_mut() {
        Some(Frame::Map(key)) => *key = None,
        Some(Frame::Seq(index)) => *index += 1,
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, document: usize, path: &str) -> Option<(u64, u64)> {
        locate(text, document, &FieldPath::parse(path)).map(|p| (p.line, p.column))
    }

    const TEXT: &str = "# comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\nkind: RenderBlueprint\nspec:\n  features:\n  - name: one\n    when: a == = 1\n  - {name: two, when: b}\n  values:\n    nested:\n      deep: 1\n";

    #[test]
    fn finds_values_keys_and_items() {
        assert_eq!(at(TEXT, 0, "metadata.name"), Some((6, 9)));
        assert_eq!(at(TEXT, 0, "metadata"), Some((5, 1)));
        assert_eq!(at(TEXT, 1, "spec.features[0].when"), Some((12, 11)));
        assert_eq!(at(TEXT, 1, "spec.features[1].when"), Some((13, 23)));
        assert_eq!(at(TEXT, 1, "spec.features[1]"), Some((13, 5)));
        assert_eq!(at(TEXT, 1, "spec.values"), Some((14, 3)));
        assert_eq!(at(TEXT, 1, "spec.values.nested.deep"), Some((16, 13)));
    }

    #[test]
    fn a_missing_field_gives_its_closest_parent() {
        assert_eq!(at(TEXT, 1, "spec.features[0].missing"), Some((11, 5)));
        assert_eq!(at(TEXT, 1, "spec.other"), Some((9, 1)));
        assert_eq!(at(TEXT, 1, ""), Some((8, 1)));
        assert_eq!(at(TEXT, 5, "spec"), None);
    }

    #[test]
    fn broken_text_gives_what_was_read() {
        assert_eq!(at("a: {b: [1, 2\n", 0, "a.b[1]"), Some((1, 8)));
        assert_eq!(at("", 0, "a"), None);
    }
}
