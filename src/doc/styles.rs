//! Which scalars were written quoted (or as block scalars) in the source text. Flux substitutes
//! variables in a resource's YAML *text*, and KOTS renders its templates in the text, so
//! `replicas: ${n}` or `replicas: repl{{ … }}` becomes a number while `value: "${PORT}"` stays a
//! string; to do the same on parsed values we need the style, which the value model drops. This
//! walks the text's nodes once ([`super::nodes`]) and only records scalars that contain `$` or a
//! KOTS template, so the result stays small.

use super::path::Segment;
use granit_parser::ScalarStyle;
use std::collections::HashSet;
use std::ops::ControlFlow;

/// A mapping key as a JSON pointer segment (`~` → `~0`, `/` → `~1`).
pub fn pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Per document, the JSON pointers (from the document root) of non-plain scalars holding `$` or
/// a KOTS template (`repl{{`, `{{repl`).
pub fn quoted_template_scalars(text: &str) -> Vec<HashSet<String>> {
    let mut documents: Vec<HashSet<String>> = Vec::new();
    super::nodes::walk(text, |node| {
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
                        Segment::Key(key) => pointer.push_str(&pointer_segment(key)),
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

    #[test]
    fn finds_quoted_dollar_scalars_by_pointer() {
        let text = "# only a comment\n---\na: ${plain}\nb: \"${quoted}\"\nc:\n- '${single}'\n- ${p}\n- |\n  ${block}\nd: {e: \"$x\", f: $y}\n---\nz: \"${z}\"\n";
        let docs = quoted_template_scalars(text);
        let first: HashSet<String> = ["/b", "/c/0", "/c/2", "/d/e"].iter().map(|s| s.to_string()).collect();
        assert_eq!(docs, vec![first, ["/z".to_string()].into_iter().collect()]);
    }
}
