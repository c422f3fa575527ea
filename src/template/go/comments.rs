//! Go's comment actions, read as Go's lexer reads them (text/template/parse/lex.go), before the
//! gotmpl crate sees the text. The crate trims the text after `{{- /* c */}}` as if the comment
//! ended with `-}}` too, and accepts comments Go refuses (`{{ /* c */}}`, `{{- /* c */ }}`).
//!
//! Each comment Go accepts is replaced by an action that prints nothing, `{{- "" }}`, with the
//! same trim markers and the same length and line breaks, so positions in later messages stay
//! where they were. A comment Go refuses is Go's error.

use std::borrow::Cow;

/// The text with each comment replaced, or Go's error for a malformed one.
pub fn normalize<'a>(source: &'a str, left: &str, right: &str) -> Result<Cow<'a, str>, String> {
    if !source.contains("/*") {
        return Ok(Cow::Borrowed(source));
    }
    let mut out = String::with_capacity(source.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = source[at..].find(left) {
        let open = at + found;
        let mut pos = open + left.len();
        let left_trim = left_trim_marker(&source[pos..]);
        if left_trim {
            pos += 2;
        }
        if source[pos..].starts_with("/*") {
            let body = pos + 2;
            let Some(end) = source[body..].find("*/") else {
                return Err(error(source, open, "unclosed comment"));
            };
            let after = body + end + 2;
            let (right_trim, close) = if right_trim_marker(&source[after..]) && source[after + 2..].starts_with(right) {
                (true, after + 2)
            } else if source[after..].starts_with(right) {
                (false, after)
            } else {
                return Err(error(source, open, "comment ends before closing delimiter"));
            };
            out.push_str(&source[copied..open]);
            out.push_str(left);
            if left_trim {
                out.push_str("- ");
            }
            // `""` and then the comment's characters as spaces, its line breaks kept.
            out.push_str("\"\"");
            let comment = &source[pos..after];
            let mut blank: String = comment.chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
            // Two characters fewer for the quotes (a comment is at least `/**/`).
            for _ in 0..2 {
                if let Some(i) = blank.find(' ') {
                    blank.remove(i);
                }
            }
            out.push_str(&blank);
            if right_trim {
                out.push_str(" -");
            }
            out.push_str(right);
            copied = close + right.len();
            at = copied;
            continue;
        }
        // Go reads `{{ /*` as an action starting with `/`, which is no token.
        if source[pos..].trim_start_matches([' ', '\t', '\r', '\n']).starts_with("/*") {
            return Err(error(source, open, "unexpected \"/\" in command"));
        }
        at = action_end(source, pos, right);
    }
    if copied == 0 {
        return Ok(Cow::Borrowed(source));
    }
    out.push_str(&source[copied..]);
    Ok(Cow::Owned(out))
}

/// Go's `-` trim marker after a left delimiter: `-` and a space.
fn left_trim_marker(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 2 && bytes[0] == b'-' && matches!(bytes[1], b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's trim marker before a right delimiter: a space and `-`.
fn right_trim_marker(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 2 && matches!(bytes[0], b' ' | b'\t' | b'\r' | b'\n') && bytes[1] == b'-'
}

/// Where the action starting at `pos` ends (after its right delimiter), quoted text skipped;
/// the end of the text when it does not (the crate's parser says what is wrong).
fn action_end(source: &str, pos: usize, right: &str) -> usize {
    walk_action(source, pos, right, &mut |_| {})
}

/// [`action_end`], showing `outside` each byte position outside quoted text. Compares bytes, so
/// a position inside a multi-byte character is never sliced at.
pub(super) fn walk_action(source: &str, mut pos: usize, right: &str, outside: &mut dyn FnMut(usize)) -> usize {
    let bytes = source.as_bytes();
    while pos < bytes.len() {
        if bytes[pos..].starts_with(right.as_bytes()) {
            return pos + right.len();
        }
        match bytes[pos] {
            quote @ (b'"' | b'\'') => {
                pos += 1;
                while pos < bytes.len() && bytes[pos] != quote && bytes[pos] != b'\n' {
                    pos += if bytes[pos] == b'\\' { 2 } else { 1 };
                }
                pos += 1;
            }
            b'`' => {
                pos += 1;
                while pos < bytes.len() && bytes[pos] != b'`' {
                    pos += 1;
                }
                pos += 1;
            }
            _ => {
                outside(pos);
                pos += 1;
            }
        }
    }
    // Stay on a character boundary for the caller's slicing.
    bytes.len()
}

fn error(source: &str, at: usize, what: &str) -> String {
    let line = source[..at].matches('\n').count() + 1;
    format!("template: {line}: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_become_empty_actions_of_the_same_length() {
        for (source, expected) in [
            ("a{{- /* c */}} b", "a{{- \"\"     }} b"),
            ("a{{/* c */ -}} b", "a{{\"\"      -}} b"),
            ("a{{- /* c */ -}} b", "a{{- \"\"      -}} b"),
            ("{{/*\n*/}}", "{{\"\"\n  }}"),
            ("{{ \"/*\" }}{{/**/}}", "{{ \"/*\" }}{{\"\"  }}"),
            ("no comment", "no comment"),
        ] {
            let normalized = normalize(source, "{{", "}}");
            assert_eq!(normalized.as_deref(), Ok(expected), "{source:?}");
            assert_eq!(expected.len(), source.len());
        }
        assert_eq!(normalize("repl{{- /* c */}} b", "repl{{", "}}").as_deref(), Ok("repl{{- \"\"     }} b"));
    }

    #[test]
    fn comments_go_refuses() {
        for (source, expected) in [
            ("{{ /* c */}}", "unexpected \"/\" in command"),
            ("{{- /* c */ }}", "comment ends before closing delimiter"),
            ("{{/* c */x}}", "comment ends before closing delimiter"),
            ("a\n{{/* c ", "template: 2: unclosed comment"),
        ] {
            let err = normalize(source, "{{", "}}").err().unwrap_or_default();
            assert!(err.contains(expected), "{source:?}: {err}");
        }
    }
}
