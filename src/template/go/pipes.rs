//! A pipeline that ends in `|` (`{{ x | f |}}`, `(x | f |)`), read as Go's parser reads it
//! (text/template/parse/parse.go: `command` stops at a `|`, and `pipeline` ends at the closing
//! delimiter or parenthesis that follows, so a trailing `|` is accepted). The gotmpl crate
//! refuses it (`empty command`); real packages use it (issue 51). Before the crate sees the text,
//! each such `|` becomes a space, so positions in later messages stay where they were.

use std::borrow::Cow;

/// The text with each `|` that only a closing delimiter or `)` follows replaced by a space.
pub fn normalize<'a>(source: &'a str, left: &str, right: &str) -> Cow<'a, str> {
    if !source.contains('|') {
        return Cow::Borrowed(source);
    }
    let bytes = source.as_bytes();
    let mut blank: Vec<usize> = Vec::new();
    let mut at = 0;
    while let Some(found) = source[at..].find(left) {
        let mut pos = at + found + left.len();
        // Inside an action: Go's lexer ends it at the first right delimiter outside a quote.
        loop {
            if pos >= bytes.len() {
                break;
            }
            if source[pos..].starts_with(right) {
                pos += right.len();
                break;
            }
            match bytes[pos] {
                q @ (b'"' | b'\'') => {
                    pos += 1;
                    while pos < bytes.len() && bytes[pos] != q && bytes[pos] != b'\n' {
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
                b'|' => {
                    let rest = &source[pos + 1..];
                    let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
                    let spaced = trimmed.len() < rest.len();
                    if trimmed.starts_with(')')
                        || trimmed.starts_with(right)
                        || (spaced && trimmed.starts_with('-') && trimmed[1..].starts_with(right))
                    {
                        blank.push(pos);
                    }
                    pos += 1;
                }
                _ => pos += 1,
            }
        }
        at = pos.min(source.len());
    }
    if blank.is_empty() {
        return Cow::Borrowed(source);
    }
    let mut out = source.as_bytes().to_vec();
    for i in blank {
        out[i] = b' ';
    }
    Cow::Owned(String::from_utf8(out).expect("a '|' replaced by a space keeps UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn trailing_pipes_become_spaces() {
        let n = |s| normalize(s, "{{repl", "}}").into_owned();
        assert_eq!(
            n(r#"{{repl if (ConfigOption "x" | ParseBool)|}}a{{repl end}}"#),
            r#"{{repl if (ConfigOption "x" | ParseBool) }}a{{repl end}}"#
        );
        assert_eq!(n(r#"{{repl (x | f |) }}"#), r#"{{repl (x | f  ) }}"#);
        assert_eq!(n("{{repl x |\n -}}"), "{{repl x  \n -}}");
        // Pipes inside quotes, between commands, and outside actions stay.
        assert_eq!(n(r#"{{repl "a|" | f }} | }}"#), r#"{{repl "a|" | f }} | }}"#);
        assert_eq!(n("{{repl `|}}` }}"), "{{repl `|}}` }}");
        assert_eq!(n("{{repl '|' }}"), "{{repl '|' }}");
    }
}
