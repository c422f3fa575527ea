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
    while let Some(found) = source.get(at..).and_then(|rest| rest.find(left)) {
        let start = at + found + left.len();
        // Inside an action: Go's lexer ends it at the first right delimiter outside a quote.
        at = super::comments::walk_action(source, start, right, &mut |pos| {
            if bytes[pos] != b'|' {
                return;
            }
            // After an ASCII `|`: a character boundary.
            let rest = source.get(pos + 1..).unwrap_or_default();
            let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
            let spaced = trimmed.len() < rest.len();
            if trimmed.starts_with(')')
                || trimmed.starts_with(right)
                || (spaced && trimmed.strip_prefix('-').is_some_and(|after| after.starts_with(right)))
            {
                blank.push(pos);
            }
        })
        .min(source.len());
    }
    if blank.is_empty() {
        return Cow::Borrowed(source);
    }
    let mut out = source.to_string();
    // Each position holds the one-byte `|`: replacing it keeps the text UTF-8.
    for i in blank {
        out.replace_range(i..=i, " ");
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::normalize;

    /// Positions inside a multi-byte character are compared as bytes, never sliced at.
    #[test]
    fn non_ascii_inside_an_action() {
        let n = |s| normalize(s, "{{", "}}").into_owned();
        assert_eq!(n("{{ é | print |}}"), "{{ é | print  }}");
        assert_eq!(n("{{ print \"|é\" }}é|"), "{{ print \"|é\" }}é|");
        assert_eq!(n("{{ é"), "{{ é");
    }

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
