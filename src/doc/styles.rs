//! Which scalars were written quoted (or as block scalars) in the source text. Flux substitutes
//! variables in a resource's YAML *text*, and KOTS renders its templates in the text, so
//! `replicas: ${n}` or `replicas: repl{{ … }}` becomes a number while `value: "${PORT}"` stays a
//! string; to do the same on parsed values we need the style, which the value model drops. This
//! walks the parser's events once (granit-parser, the parser under serde-saphyr) and only records
//! scalars that contain `$` or a KOTS template, so the result stays small.

use std::collections::HashSet;

enum Frame {
    Map { key: Option<String> },
    Seq { index: usize },
}

/// A mapping key as a JSON pointer segment (`~` → `~0`, `/` → `~1`).
pub fn pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Per document, the JSON pointers (from the document root) of non-plain scalars holding `$` or
/// a KOTS template (`repl{{`, `{{repl`).
pub fn quoted_template_scalars(text: &str) -> Vec<HashSet<String>> {
    use granit_parser::{Event, Parser, ScalarStyle};
    let mut documents = Vec::new();
    let mut current: HashSet<String> = HashSet::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<String> = Vec::new();
    // Documents that are empty or null are skipped by the reader; skip them here too so that
    // document numbers agree.
    let mut null_root = false;
    // A value was read: move the enclosing collection on to its next key or index.
    fn advance(stack: &mut [Frame], path: &mut Vec<String>) {
        match stack.last_mut() {
            Some(Frame::Map { key }) => {
                *key = None;
                path.pop();
            }
            Some(Frame::Seq { index }) => {
                *index += 1;
                path.pop();
                path.push(index.to_string());
            }
            None => {}
        }
    }
    for event in Parser::new_from_str(text) {
        let Ok((event, _)) = event else { break };
        match event {
            Event::DocumentStart(..) => {
                current = HashSet::new();
                stack.clear();
                path.clear();
                null_root = false;
            }
            Event::DocumentEnd if !null_root => documents.push(std::mem::take(&mut current)),
            Event::Scalar(value, style, ..) => {
                if stack.is_empty()
                    && style == ScalarStyle::Plain
                    && ["", "~", "null", "Null", "NULL"].contains(&&*value)
                {
                    null_root = true;
                }
                if let Some(Frame::Map { key: key @ None }) = stack.last_mut() {
                    *key = Some(value.to_string());
                    path.push(pointer_segment(&value));
                    continue;
                }
                if style != ScalarStyle::Plain
                    && (value.contains('$') || value.contains("repl{{") || value.contains("{{repl"))
                {
                    current.insert(format!("/{}", path.join("/")));
                }
                advance(&mut stack, &mut path);
            }
            Event::Alias(_) => advance(&mut stack, &mut path),
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if let Some(Frame::Map { key: key @ None }) = stack.last_mut() {
                    // A complex key: not addressable by a pointer; give it a placeholder.
                    *key = Some("?".into());
                    path.push("?".into());
                }
                if matches!(event, Event::SequenceStart(..)) {
                    stack.push(Frame::Seq { index: 0 });
                    path.push("0".into());
                } else {
                    stack.push(Frame::Map { key: None });
                }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if matches!(stack.pop(), Some(Frame::Seq { .. })) {
                    path.pop();
                }
                advance(&mut stack, &mut path);
            }
            _ => {}
        }
    }
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
