//! Sprig's regular expressions on the `regex` crate, whose syntax is RE2's as Go's `regexp`
//! reads it. To match Go, `\d`, `\w`, `\s` and `\b` are made ASCII-only (the crate's are
//! Unicode) and `\Q…\E` is turned into escaped text (the crate lacks it). Remaining gaps: error
//! texts are the crate's, not Go's; negated classes inside brackets (`[\D]`) stay Unicode; Go
//! refuses repetition counts above 1000 where the crate allows them up to its size limit.

use super::convert::check_size;
use crate::template::go::{self, define, Args, Arity::Exact, FuncMap, GoValue, TemplateError};
use regex::Regex;

pub fn register(funcs: &mut FuncMap) {
    define(funcs, "regexMatch", Exact(2), |args| {
        // Both arguments are strings, as Go checks before the call; a bad pattern is false.
        let (pattern, s) = (args.string(0)?, args.string(1)?);
        Ok(GoValue::Bool(compile(pattern).is_ok_and(|re| re.is_match(s))))
    });
    define(funcs, "mustRegexMatch", Exact(2), |args| {
        let s = args.string(1)?;
        Ok(GoValue::Bool(regex(args)?.is_match(s)))
    });
    for name in ["regexFindAll", "mustRegexFindAll"] {
        define(funcs, name, Exact(3), |args| {
            let (s, n) = (args.string(1)?, args.int(2)?);
            let re = regex(args)?;
            let limit = usize::try_from(n).unwrap_or(usize::MAX);
            let found: Vec<GoValue> = re.find_iter(s).take(limit).map(|m| go::string(m.as_str())).collect();
            // Go's FindAllString returns nil without a match.
            Ok(if found.is_empty() { strings_nil() } else { go::typed_list(found, go::Elem::String) })
        });
    }
    for name in ["regexFind", "mustRegexFind"] {
        define(funcs, name, Exact(2), |args| {
            let s = args.string(1)?;
            Ok(go::string(regex(args)?.find(s).map_or("", |m| m.as_str())))
        });
    }
    for name in ["regexReplaceAll", "mustRegexReplaceAll"] {
        define(funcs, name, Exact(3), |args| replace(args, true));
    }
    for name in ["regexReplaceAllLiteral", "mustRegexReplaceAllLiteral"] {
        define(funcs, name, Exact(3), |args| replace(args, false));
    }
    for name in ["regexSplit", "mustRegexSplit"] {
        define(funcs, name, Exact(3), split);
    }
    define(funcs, "regexQuoteMeta", Exact(1), |args| Ok(go::string(quote_meta(args.string(0)?))));
}

/// The pattern argument compiled; a bad pattern is the call's error.
fn regex(args: &Args<'_>) -> Result<Regex, TemplateError> {
    compile(args.string(0)?).map_err(|err| go::fail(args.name(), err))
}

/// Compiles a Go (RE2) pattern.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&translate(pattern)).map_err(|err| format!("error parsing regexp: {err}"))
}

/// Rewrites the Go-isms the crate reads differently (see the module comment).
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                match (next, in_class) {
                    ('Q', _) => {
                        let mut literal = String::new();
                        while let Some(c) = chars.next() {
                            if c == '\\' && chars.peek() == Some(&'E') {
                                chars.next();
                                break;
                            }
                            literal.push(c);
                        }
                        out.push_str(&regex::escape(&literal));
                    }
                    ('d' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B', false) => {
                        out.push_str(&format!("(?-u:\\{next})"));
                    }
                    ('d', true) => out.push_str("0-9"),
                    ('w', true) => out.push_str("0-9A-Za-z_"),
                    ('s', true) => out.push_str("\\t\\n\\f\\r "),
                    (other, _) => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` first in a class (after an optional `^`) is literal.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            '[' if chars.peek() == Some(&':') => {
                // A POSIX class inside brackets: copy through its closing `:]`.
                out.push('[');
                for c in chars.by_ref() {
                    out.push(c);
                    if c == ']' {
                        break;
                    }
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            other => out.push(other),
        }
    }
    out
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `ReplaceAllString` (with `$1`/`${name}` expansion, which the crate spells as Go does) or
/// `ReplaceAllLiteralString`.
fn replace(args: &Args<'_>, expand: bool) -> Result<GoValue, TemplateError> {
    let (s, replacement) = (args.string(1)?, args.string(2)?);
    let re = regex(args)?;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for captures in re.captures_iter(s) {
        let Some(whole) = captures.get(0) else { continue };
        out.push_str(&s[last..whole.start()]);
        if expand {
            captures.expand(replacement, &mut out);
        } else {
            out.push_str(replacement);
        }
        last = whole.end();
        check_size(args, out.len())?;
    }
    out.push_str(&s[last..]);
    Ok(go::string(out))
}

/// Go's nil `[]string`.
fn strings_nil() -> GoValue {
    GoValue::List(go::List::nil(go::Elem::String))
}

/// Go's `Regexp.Split`.
fn split(args: &Args<'_>) -> Result<GoValue, TemplateError> {
    let (s, n) = (args.string(1)?, args.int(2)?);
    let re = regex(args)?;
    if n == 0 {
        // Go's Split returns nil for n == 0.
        return Ok(strings_nil());
    }
    if !args.string(0)?.is_empty() && s.is_empty() {
        return Ok(go::typed_list(vec![go::string("")], go::Elem::String));
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let mut parts = Vec::new();
    let (mut begin, mut end) = (0, 0);
    for m in re.find_iter(s) {
        if parts.len() + 1 == limit {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            parts.push(go::string(&s[begin..end]));
        }
        begin = m.end();
    }
    if end != s.len() {
        parts.push(go::string(&s[begin..]));
    }
    Ok(go::typed_list(parts, go::Elem::String))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{expect, expect_err};

    #[test]
    fn sprig_regex() {
        // regex_test.go: TestRegexMatch, TestRegexFindAll, TestRegexFind, TestRegexReplaceAll,
        // TestRegexReplaceAllLiteral, TestRegexSplit; functions_test.go: TestRegex.
        let email = r#""[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}""#;
        expect(&[
            (&format!("{{{{ regexMatch {email} \"test@acme.com\" }}}}"), "true"),
            (&format!("{{{{ regexMatch {email} \"Test@Acme.Com\" }}}}"), "true"),
            (&format!("{{{{ regexMatch {email} \"test@acme\" }}}}"), "false"),
            (r#"{{ regexMatch "(" "x" }}"#, "false"),
            (
                r#"{{ len (regexFindAll "a{2}" "aa" -1) }}{{ len (regexFindAll "a{2}" "aaaaaaaa" 1) }}{{ len (regexFindAll "a{2}" "aaaa" -1) }}{{ len (regexFindAll "a{2}" "none" -1) }}"#,
                "1120",
            ),
            (r#"{{ regexFind "fo.?" "foorbar" }}|{{ regexFind "fo.?" "none" }}"#, "foo|"),
            (r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "T" }}"#, "-T-T-"),
            (r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "$1" }}"#, "--xx-"),
            (r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "$1W" }}"#, "---"),
            (r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}"#, "-W-xxW-"),
            (r#"{{ regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "$1" }}"#, "-$1-$1-"),
            (r#"{{ regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "${1}" }}"#, "-${1}-${1}-"),
            (
                r#"{{ len (regexSplit "a" "banana" -1) }}{{ len (regexSplit "a" "banana" 0) }}{{ len (regexSplit "a" "banana" 1) }}{{ len (regexSplit "a" "banana" 2) }}"#,
                "4012",
            ),
            (r#"{{ len (regexSplit "z+" "pizza" -1) }}{{ regexSplit "z+" "pizza" -1 }}"#, "2[pi a]"),
            (r#"{{ regexQuoteMeta "1.2.3" }} {{ regexQuoteMeta "pretzel" }}"#, r"1\.2\.3 pretzel"),
            // Go's classes are ASCII; \Q…\E quotes.
            (
                r#"{{ regexMatch "^\\d+$" "١٢" }} {{ regexMatch "^[\\d]+$" "12" }} {{ regexFind "\\Qa.b\\E" "xa.by" }}"#,
                "false true a.b",
            ),
            (r#"{{ regexFindAll "a*" "baaac" -1 }}"#, "[ aaa ]"),
        ]);
        expect_err(&[
            (r#"{{ mustRegexMatch "(" "x" }}"#, "error calling mustRegexMatch: error parsing regexp"),
            (r#"{{ regexFind "(" "x" }}"#, "error calling regexFind: error parsing regexp"),
        ]);
    }
}
