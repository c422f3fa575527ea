//! Where a field is written in the source text. The value model keeps no positions (carrying a
//! span on every node would cost memory on every run), so when the CLI reports a problem at a
//! field path it reads the file again and walks its nodes ([`super::nodes`]) to the field. Only
//! the failing path pays for this.

use super::FieldPath;
use granit_parser::Marker;
use std::ops::ControlFlow;

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

/// The position of `field` in the `document`-th document of `text` (counting as the reader does:
/// empty and null documents are skipped). A mapping entry is reported at its value when that
/// starts on the key's line (`when: a ==` points at the expression), otherwise at its key. When
/// the path does not exist in the text (a default, a derived field) the deepest existing parent is
/// reported, so a caller always gets the closest place that is written down.
pub fn locate(text: &str, document: usize, field: &FieldPath) -> Option<Position> {
    let target = field.segments();
    // How many leading segments of the target are found so far, and where the last one is.
    let mut best: Option<(usize, Position)> = None;
    super::nodes::walk(text, |node| {
        if node.document > document {
            return ControlFlow::Break(());
        }
        let depth = node.path.len();
        if node.document < document || depth > target.len() || node.path != &target[..depth] {
            return ControlFlow::Continue(());
        }
        let position = match node.key_at {
            Some(key) if key.line() != node.at.line() => key.into(),
            _ => node.at.into(),
        };
        if best.is_none_or(|(found, _)| depth > found) {
            best = Some((depth, position));
        }
        if depth == target.len() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    best.map(|(_, position)| position)
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
