//! Sprig's string functions. Sprig slices strings by byte (`trunc`, `substr`, `abbrev`); where
//! a cut falls inside a UTF-8 character Go keeps the broken bytes and we write U+FFFD. Goutils'
//! `nospace`, `initials` and `wrap` also work on bytes; ours work on characters, which only
//! differs for non-ASCII text.

use super::convert::{check_size, strval};
use crate::template::go::{self, define, Args, Arity::AtLeast, Arity::Exact, FuncMap, GoValue, TemplateError};

pub fn register(funcs: &mut FuncMap) {
    define(funcs, "trim", Exact(1).writes(go::args::TEXT), |args| Ok(go::string(args.string(0)?.trim())));
    for name in ["trimAll", "trimall"] {
        define(funcs, name, Exact(2), |args| {
            let cutset = args.string(0)?;
            Ok(go::string(args.string(1)?.trim_matches(|c| cutset.contains(c))))
        });
    }
    define(funcs, "trimPrefix", Exact(2), |args| {
        let (prefix, s) = (args.string(0)?, args.string(1)?);
        Ok(go::string(s.strip_prefix(prefix).unwrap_or(s)))
    });
    define(funcs, "trimSuffix", Exact(2), |args| {
        let (suffix, s) = (args.string(0)?, args.string(1)?);
        Ok(go::string(s.strip_suffix(suffix).unwrap_or(s)))
    });
    define(funcs, "upper", Exact(1).writes(go::args::TEXT), |args| Ok(go::string(to_upper(args.string(0)?))));
    define(funcs, "lower", Exact(1).writes(go::args::TEXT), |args| Ok(go::string(to_lower(args.string(0)?))));
    define(funcs, "title", Exact(1).writes(go::args::TEXT), |args| Ok(go::string(title(args.string(0)?))));
    define(funcs, "untitle", Exact(1).writes(go::args::TEXT), |args| Ok(go::string(untitle(args.string(0)?))));
    define(funcs, "repeat", Exact(2), |args| {
        let (count, s) = (args.int(0)?, args.string(1)?);
        let count = usize::try_from(count).map_err(|_| go::fail(args.name(), "strings: negative Repeat count"))?;
        check_size(args, s.len().saturating_mul(count))?;
        Ok(go::string(s.repeat(count)))
    });
    define(funcs, "substr", Exact(3), substr);
    define(funcs, "nospace", Exact(1).writes(go::args::TEXT), |args| {
        Ok(go::string(args.string(0)?.chars().filter(|c| !c.is_whitespace()).collect::<String>()))
    });
    define(funcs, "trunc", Exact(2), |args| {
        let (count, s) = (args.int(0)?, args.string(1)?);
        let len = s.len() as i64;
        Ok(go::string(if count < 0 && len + count > 0 {
            bytes(s, (len + count) as usize, s.len())
        } else if count >= 0 && len > count {
            bytes(s, 0, count as usize)
        } else {
            s.to_string()
        }))
    });
    define(funcs, "abbrev", Exact(2), |args| {
        let (width, s) = (args.int(0)?, args.string(1)?);
        Ok(go::string(if width < 4 { s.to_string() } else { abbreviate(s, 0, width) }))
    });
    define(funcs, "abbrevboth", Exact(3), |args| {
        let (left, right, s) = (args.int(0)?, args.int(1)?, args.string(2)?);
        Ok(go::string(if right < 4 || left > 0 && right < 7 { s.to_string() } else { abbreviate(s, left, right) }))
    });
    define(funcs, "initials", Exact(1), |args| {
        let mut out = String::new();
        let mut gap = true;
        for c in args.string(0)?.chars() {
            if c.is_whitespace() {
                gap = true;
            } else if gap {
                out.push(c);
                gap = false;
            }
        }
        Ok(go::string(out))
    });
    define(funcs, "wrap", Exact(2).writes(go::args::TEXT), |args| {
        Ok(go::string(wrap(args.string(1)?, args.int(0)?, "\n", false)))
    });
    define(funcs, "wrapWith", Exact(3).writes(go::args::TEXT), |args| {
        let (width, sep, s) = (args.int(0)?, args.string(1)?, args.string(2)?);
        check_size(args, s.len().saturating_mul(sep.len().max(1)))?;
        Ok(go::string(wrap(s, width, sep, true)))
    });
    define(funcs, "contains", Exact(2), |args| Ok(GoValue::Bool(args.string(1)?.contains(args.string(0)?))));
    define(funcs, "hasPrefix", Exact(2), |args| Ok(GoValue::Bool(args.string(1)?.starts_with(args.string(0)?))));
    define(funcs, "hasSuffix", Exact(2), |args| Ok(GoValue::Bool(args.string(1)?.ends_with(args.string(0)?))));
    define(funcs, "quote", AtLeast(0).writes(go::args::ESCAPES), |args| {
        let quoted: Vec<String> =
            args.rest(0).iter().filter(|v| !matches!(v, GoValue::Nil)).map(|v| go_quote(&strval(v))).collect();
        Ok(go::string(quoted.join(" ")))
    });
    define(funcs, "squote", AtLeast(0).writes(go::args::TEXT), |args| {
        let quoted: Vec<String> = args
            .rest(0)
            .iter()
            .filter(|v| !matches!(v, GoValue::Nil))
            .map(|v| format!("'{}'", go::fmt::sprint_value(v)))
            .collect();
        Ok(go::string(quoted.join(" ")))
    });
    define(funcs, "cat", AtLeast(0).writes(go::args::TEXT), |args| {
        let parts: Vec<String> =
            args.rest(0).iter().filter(|v| !matches!(v, GoValue::Nil)).map(go::fmt::sprint_value).collect();
        Ok(go::string(parts.join(" ")))
    });
    define(funcs, "indent", Exact(2).writes(go::args::TEXT), |args| indent(args, false));
    define(funcs, "nindent", Exact(2).writes(go::args::TEXT), |args| indent(args, true));
    define(funcs, "replace", Exact(3).writes(go::args::TEXT), |args| {
        let (old, new, s) = (args.string(0)?, args.string(1)?, args.string(2)?);
        let matches = if old.is_empty() { s.chars().count() + 1 } else { s.matches(old).count() };
        check_size(args, s.len().saturating_add(matches.saturating_mul(new.len())))?;
        Ok(go::string(s.replace(old, new)))
    });
    define(funcs, "plural", Exact(3), |args| {
        let (one, many, count) = (args.string(0)?, args.string(1)?, args.int(2)?);
        Ok(go::string(if count == 1 { one } else { many }))
    });
    define(funcs, "snakecase", Exact(1), |args| Ok(go::string(lower_words(args.string(0)?, '_'))));
    define(funcs, "kebabcase", Exact(1), |args| Ok(go::string(lower_words(args.string(0)?, '-'))));
    define(funcs, "camelcase", Exact(1), |args| Ok(go::string(pascal_case(args.string(0)?))));
    define(funcs, "swapcase", Exact(1), |args| Ok(go::string(swap_case(args.string(0)?))));
    define(funcs, "toString", Exact(1).writes(go::args::TEXT), |args| Ok(go::string(strval(args.any(0)))));
    define(funcs, "toStrings", Exact(1).writes(go::args::TEXT), |args| Ok(strings_list(strslice(args.any(0)))));
    define(funcs, "split", Exact(2), |args| Ok(numbered(go_split(args.string(1)?, args.string(0)?, -1))));
    define(funcs, "splitn", Exact(3), |args| Ok(numbered(go_split(args.string(2)?, args.string(0)?, args.int(1)?))));
    define(funcs, "splitList", Exact(2).writes(go::args::TEXT), |args| {
        Ok(strings_list(go_split(args.string(1)?, args.string(0)?, -1)))
    });
    define(funcs, "join", Exact(2).writes(go::args::TEXT), |args| {
        Ok(go::string(strslice(args.any(1)).join(args.string(0)?)))
    });
    define(funcs, "sortAlpha", Exact(1).writes(go::args::TEXT), |args| {
        let mut items = match args.any(0) {
            GoValue::List(_) => strslice(args.any(0)),
            other => vec![strval(other)],
        };
        items.sort();
        Ok(strings_list(items))
    });
}

/// Bytes `start..end` of `s` (Sprig cuts by byte), with U+FFFD for a cut character.
fn bytes(s: &str, start: usize, end: usize) -> String {
    String::from_utf8_lossy(s.as_bytes().get(start..end).unwrap_or_default()).into_owned()
}

fn substr(args: &Args<'_>) -> Result<GoValue, TemplateError> {
    let (start, end, s) = (args.int(0)?, args.int(1)?, args.string(2)?);
    let len = s.len() as i64;
    let (from, to) = if start < 0 {
        (0, end)
    } else if end < 0 || end > len {
        (start, len)
    } else {
        (start, end)
    };
    if from < 0 || to < from || to > len {
        return Err(go::fail(
            args.name(),
            format!("runtime error: slice bounds out of range [{from}:{to}] with length {len}"),
        ));
    }
    Ok(go::string(bytes(s, from as usize, to as usize)))
}

/// Goutils' `AbbreviateFull`: at most `width` bytes with `...` where text was cut.
fn abbreviate(s: &str, offset: i64, width: i64) -> String {
    let len = s.len() as i64;
    if s.is_empty() || len <= width {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < width - 3 {
        offset = len - (width - 3);
    }
    if offset <= 4 {
        return format!("{}...", bytes(s, 0, (width - 3) as usize));
    }
    if width < 7 {
        return String::new();
    }
    if offset + width - 3 < len {
        let rest = bytes(s, offset as usize, s.len());
        return format!("...{}", abbreviate(&rest, 0, width - 3));
    }
    format!("...{}", bytes(s, (len - (width - 3)) as usize, s.len()))
}

/// Goutils' `WrapCustom`: breaks at spaces so lines stay within `width` characters.
fn wrap(s: &str, width: i64, newline: &str, wrap_long_words: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let width = usize::try_from(width.max(1)).unwrap_or(1);
    let chars: Vec<char> = s.chars().collect();
    let text = |from: usize, to: usize| chars[from..to].iter().collect::<String>();
    let mut out = String::new();
    let mut offset = 0;
    while chars.len() - offset > width {
        if chars[offset] == ' ' {
            offset += 1;
            continue;
        }
        let end = (width + offset + 1).min(chars.len());
        if let Some(space) = chars[offset..end].iter().rposition(|&c| c == ' ') {
            out.push_str(&text(offset, offset + space));
            out.push_str(newline);
            offset += space + 1;
        } else if wrap_long_words {
            out.push_str(&text(offset, offset + width));
            out.push_str(newline);
            offset += width;
        } else {
            let end = width + offset;
            match chars[end..].iter().position(|&c| c == ' ') {
                None => {
                    out.push_str(&text(offset, chars.len()));
                    offset = chars.len();
                }
                Some(space) => {
                    out.push_str(&text(offset, end + space));
                    out.push_str(newline);
                    offset = end + space + 1;
                }
            }
        }
    }
    out.push_str(&text(offset, chars.len()));
    out
}

fn indent(args: &Args<'_>, leading_newline: bool) -> Result<GoValue, TemplateError> {
    let (spaces, s) = (args.int(0)?, args.string(1)?);
    let spaces = usize::try_from(spaces).map_err(|_| go::fail(args.name(), "strings: negative Repeat count"))?;
    let lines = s.matches('\n').count() + 1;
    check_size(args, s.len().saturating_add(lines.saturating_mul(spaces)))?;
    let pad = " ".repeat(spaces);
    let indented = format!("{pad}{}", s.replace('\n', &format!("\n{pad}")));
    Ok(go::string(if leading_newline { format!("\n{indented}") } else { indented }))
}

/// Go's simple upper-case mapping, character by character (`ß` stays, as in Go).
pub fn to_upper(s: &str) -> String {
    s.chars().map(|c| single(c.to_uppercase(), c)).collect()
}

/// Go's simple lower-case mapping, character by character.
pub fn to_lower(s: &str) -> String {
    s.chars().map(|c| single(c.to_lowercase(), c)).collect()
}

/// The mapping when it is one character (Go's simple case mapping), else the character itself.
fn single(mut mapped: impl Iterator<Item = char>, c: char) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

/// Go's `strings.Title`: the first letter of every word upper-cased; words are separated by
/// anything but letters, digits, `_` and `'`… as Go's `isSeparator` decides.
fn title(s: &str) -> String {
    let mut previous = ' ';
    s.chars()
        .map(|c| {
            let separator = match previous {
                c if c.is_ascii() => !(c.is_ascii_alphanumeric() || c == '_'),
                c if c.is_alphanumeric() => false,
                c => c.is_whitespace(),
            };
            previous = c;
            if separator {
                single(c.to_uppercase(), c)
            } else {
                c
            }
        })
        .collect()
}

/// Goutils' `Uncapitalize`: the first letter of every whitespace-separated word lower-cased.
fn untitle(s: &str) -> String {
    let mut next = true;
    s.chars()
        .map(|c| {
            if c.is_whitespace() {
                next = true;
                c
            } else if next {
                next = false;
                single(c.to_lowercase(), c)
            } else {
                c
            }
        })
        .collect()
}

/// Goutils' `SwapCase`: upper to lower, lower to upper, and a lower-case letter starting a
/// word to title case.
fn swap_case(s: &str) -> String {
    let mut after_space = true;
    s.chars()
        .map(|c| {
            if c.is_uppercase() {
                after_space = false;
                single(c.to_lowercase(), c)
            } else if c.is_lowercase() {
                after_space = false;
                single(c.to_uppercase(), c)
            } else {
                after_space = c.is_whitespace();
                c
            }
        })
        .collect()
}

/// Go's `%q` of a string: double quotes, Go escapes, printable Unicode kept.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() || c == '\u{feff}' || matches!(c, '\u{2028}' | '\u{2029}' | '\u{ad}') => {
                if (c as u32) > 0xffff {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                } else {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Sprig's `strslice`: a list's non-nil items as strings; nil is no strings; anything else
/// is itself as one string.
pub fn strslice(value: &GoValue) -> Vec<String> {
    match value {
        GoValue::List(items) => items.iter().filter(|v| !matches!(v, GoValue::Nil)).map(strval).collect(),
        GoValue::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

/// A `[]string`.
pub fn strings_list(items: Vec<String>) -> GoValue {
    go::typed_list(items.into_iter().map(go::string).collect(), go::Elem::String)
}

/// Go's `strings.SplitN` (`n < 0`: all; `n == 0`: none; an empty separator splits characters).
pub fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    if sep.is_empty() {
        let mut parts: Vec<String> = Vec::new();
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            if parts.len() + 1 == limit {
                break;
            }
            parts.push(c.to_string());
            rest = &rest[c.len_utf8()..];
        }
        if !rest.is_empty() {
            parts.push(rest.to_string());
        }
        return parts;
    }
    s.splitn(limit, sep).map(str::to_string).collect()
}

/// Sprig's `split` result: a `map[string]string` from `_0`, `_1`, … to the parts.
fn numbered(parts: Vec<String>) -> GoValue {
    GoValue::Map(go::MapRef::strings(
        parts.into_iter().enumerate().map(|(i, part)| (format!("_{i}").into(), go::string(part))).collect(),
    ))
}

/// What kind of word xstrings' tokenizer found.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Word {
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// xstrings' `isAlphabet`: letters, CJK ideographs excepted.
fn is_alphabet(c: char) -> bool {
    c.is_alphabetic() && !matches!(c, '\u{4E00}'..='\u{9FCC}' | '\u{3400}'..='\u{4D85}' | '\u{20000}'..='\u{2B81D}')
}

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~')
        || !c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace() && !c.is_control() && is_unicode_punct(c)
}

/// Common Unicode punctuation outside ASCII (general category P), for xstrings' tokenizer.
fn is_unicode_punct(c: char) -> bool {
    matches!(c, '\u{00A1}' | '\u{00A7}' | '\u{00AB}' | '\u{00B6}' | '\u{00B7}' | '\u{00BB}' | '\u{00BF}'
        | '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205E}' | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}'
        | '\u{3014}'..='\u{301F}' | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF3D}'
        | '\u{FF5B}'..='\u{FF65}')
}

/// xstrings' `nextWord`: the kind and length (in characters) of the word at the start of
/// `chars`.
fn next_word(chars: &[char]) -> (Word, usize) {
    let Some(&first) = chars.first() else { return (Word::Other, 0) };
    let run = |from: usize, keep: &dyn Fn(char) -> bool| from + chars[from..].iter().take_while(|&&c| keep(c)).count();
    if is_connector(first) {
        (Word::Connector, run(1, &is_connector))
    } else if is_punct(first) {
        (Word::Punct, run(1, &is_punct))
    } else if first.is_uppercase() {
        match chars.get(1) {
            Some(c) if c.is_uppercase() => {
                let end = run(1, &|c| c.is_uppercase());
                // "HTTPServer": the last capital starts the next word.
                if chars.get(end).is_some_and(|&c| is_alphabet(c)) {
                    (Word::Upper, end - 1)
                } else {
                    (Word::Upper, end)
                }
            }
            Some(&c) if is_alphabet(c) => (Word::Upper, run(1, &|c| is_alphabet(c) && !c.is_uppercase())),
            _ => (Word::Upper, 1),
        }
    } else if is_alphabet(first) {
        (Word::Alphabet, run(1, &|c| is_alphabet(c) && !c.is_uppercase()))
    } else if first.is_numeric() {
        (Word::Number, run(1, &char::is_numeric))
    } else {
        let end = run(1, &|c| !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c)));
        (Word::Other, end)
    }
}

/// xstrings' `camelCaseToLowerCase` (snake and kebab case), which keeps digits with the word
/// they touch (`http2xx` → `http_2xx`, `HTTP2XX` → `http2_xx`).
fn lower_words(s: &str, connector: char) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    let next = |at: &mut usize| -> (Word, &[char]) {
        let (kind, len) = next_word(&chars[*at..]);
        let word = &chars[*at..*at + len];
        *at += len;
        (kind, word)
    };
    let push = |out: &mut String, kind: Word, word: &[char]| {
        for &c in word {
            if kind != Word::Upper && kind != Word::Connector {
                out.push(c);
            } else if is_connector(c) {
                out.push(connector);
            } else {
                out.push(single(c.to_lowercase(), c));
            }
        }
    };
    let (mut kind, mut word) = next(&mut at);
    while at < chars.len() {
        if kind != Word::Connector {
            push(&mut out, kind, word);
        }
        let (previous, last) = (kind, word);
        (kind, word) = next(&mut at);
        match previous {
            Word::Number => {
                while kind == Word::Alphabet || kind == Word::Number {
                    push(&mut out, kind, word);
                    (kind, word) = next(&mut at);
                }
                if kind != Word::Punct && kind != Word::Connector && !word.is_empty() {
                    out.push(connector);
                }
            }
            Word::Connector => push(&mut out, previous, last),
            Word::Punct => {}
            _ => {
                if kind != Word::Number {
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if at >= chars.len() {
                    continue;
                }
                let number = word;
                (kind, word) = next(&mut at);
                if kind != Word::Alphabet {
                    push(&mut out, Word::Number, number);
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push(&mut out, Word::Number, number);
                while kind == Word::Alphabet || kind == Word::Number {
                    push(&mut out, kind, word);
                    (kind, word) = next(&mut at);
                }
                if kind != Word::Connector && kind != Word::Punct && !word.is_empty() {
                    out.push(connector);
                }
            }
        }
    }
    push(&mut out, kind, word);
    out
}

/// xstrings' `ToPascalCase` (Sprig's `camelcase`): connectors dropped, the letter after each
/// upper-cased; leading connectors kept.
fn pascal_case(s: &str) -> String {
    let mut chars = s.chars();
    let mut out = String::new();
    let mut current = None;
    let mut first_upper = false;
    for c in chars.by_ref() {
        if !is_connector(c) {
            first_upper = c.is_uppercase();
            current = Some(single(c.to_uppercase(), c));
            break;
        }
        out.push(c);
    }
    let Some(mut r0) = current else { return out };
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = false;
            r0 = single(r0.to_uppercase(), r0);
        } else {
            if first_upper {
                if r0.is_uppercase() {
                    r0 = single(r0.to_lowercase(), r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{expect, expect_err};
    use super::*;

    #[test]
    fn sprig_string_functions() {
        // strings_test.go: TestSubstr, TestTrunc, TestQuote, TestSquote, TestContains, TestTrim,
        // TestSplit, TestSplitn, TestToStrings, TestJoin, TestSortAlpha, TestGoutils, TestCat,
        // TestIndent, TestNindent, TestReplace, TestPlural.
        expect(&[
            (r#"{{"fooo" | substr 0 3 }}"#, "foo"),
            (r#"{{"foo" | substr 0 10 }}"#, "foo"),
            (r#"{{ "foooooo" | trunc 3 }}"#, "foo"),
            (r#"{{ "baaaaaar" | trunc -3 }}"#, "aar"),
            (r#"{{ "baaaaaar" | trunc -999 }}"#, "baaaaaar"),
            (r#"{{ "baaaaaz" | trunc 0 }}"#, ""),
            (r#"{{quote "a" "b" "c"}}"#, r#""a" "b" "c""#),
            (r#"{{quote "\"a\"" "b" "c"}}"#, r#""\"a\"" "b" "c""#),
            (r#"{{quote 1 2 3 }}"#, r#""1" "2" "3""#),
            (r#"{{ .value | quote }}"#, ""),
            (r#"{{squote "a" "b" "c"}}{{squote 1 2 3 }}"#, "'a' 'b' 'c''1' '2' '3'"),
            (r#"{{if contains "cat" "fair catch"}}1{{end}}"#, "1"),
            (r#"{{if hasPrefix "cat" "catch"}}1{{end}}{{if hasSuffix "cat" "ducat"}}1{{end}}"#, "11"),
            (
                r#"{{trim "   5.00   "}}|{{trimAll "$" "$5.00$"}}|{{trimPrefix "$" "$5.00"}}|{{trimSuffix "$" "5.00$"}}"#,
                "5.00|5.00|5.00|5.00",
            ),
            (r#"{{$v := "foo$bar$baz" | split "$"}}{{$v._0}}{{$v._2}}"#, "foobaz"),
            (r#"{{$v := "foo$bar$baz" | splitn "$" 2}}{{$v._0}} {{$v._1}}"#, "foo bar$baz"),
            (r#"{{ splitList "," "a,b,c" }} {{ splitList "" "abc" }}"#, "[a b c] [a b c]"),
            (r#"{{ $s := list 1 2 3 | toStrings }}{{ index $s 1 | kindOf }}"#, "string"),
            (r#"{{ list 1 .value 2 | toStrings }}"#, "[1 2]"),
            (
                r#"{{ tuple "a" "b" "c" | join "-" }} {{ tuple 1 2 3 | join "-" }} {{ join "-" "abc" }}"#,
                "a-b-c 1-2-3 abc",
            ),
            (r#"{{ list "c" "a" "b" | sortAlpha | join "" }}{{ list 2 1 4 3 | sortAlpha | join "" }}"#, "abc1234"),
            (r#"{{abbrev 5 "hello world"}}"#, "he..."),
            (r#"{{abbrevboth 5 10 "1234 5678 9123"}}"#, "...5678..."),
            (r#"{{nospace "h e l l o "}}"#, "hello"),
            (r#"{{untitle "First Try"}}"#, "first try"),
            (r#"{{initials "First Try"}}"#, "FT"),
            (r#"{{wrap 5 "Hello World"}}"#, "Hello\nWorld"),
            (r#"{{wrapWith 5 "\t" "Hello World"}}"#, "Hello\tWorld"),
            (r#"{{$b := "b"}}{{"c" | cat "a" $b}}"#, "a b c"),
            (r#"{{ .value | cat "a" "b"}}"#, "a b"),
            (r#"{{indent 4 "a\nb\nc"}}"#, "    a\n    b\n    c"),
            (r#"{{nindent 4 "a\nb\nc"}}"#, "\n    a\n    b\n    c"),
            (r#"{{"I Am Henry VIII" | replace " " "-"}}"#, "I-Am-Henry-VIII"),
            (r#"{{$num := len "two"}}{{$num}} {{$num | plural "1 char" "chars"}}"#, "3 chars"),
            (r#"{{len "t" | plural "cheese" "%d chars"}}"#, "cheese"),
            (
                r#"{{ upper "hello" }} {{ lower "HELLO" }} {{ title "hello world-wide o'neil" }}"#,
                "HELLO hello Hello World-Wide O'Neil",
            ),
            (r#"{{ repeat 3 "ab" }}|{{ "ab" | repeat 0 }}"#, "ababab|"),
            (r#"{{ swapcase "This Is A.Test" }}"#, "tHIS iS a.tEST"),
            (
                r#"{{ toString 1 }} {{ toString 1.5 }} {{ toString (list 1 "a") }} {{ toString .Nothing }}"#,
                "1 1.5 [1 a] <nil>",
            ),
        ]);
        expect_err(&[
            (r#"{{ repeat -1 "x" }}"#, "error calling repeat: strings: negative Repeat count"),
            (r#"{{ substr 5 2 "abcdefgh" }}"#, "slice bounds out of range"),
            (r#"{{ repeat 100000000 "abcdefgh" }}"#, "more than the 16777216 one call may build"),
            (r#"{{ indent 100000000 "a\nb" }}"#, "more than the"),
            (r#"{{ upper 1 }}"#, "expected string; got int"),
        ]);
    }

    #[test]
    fn xstrings_cases() {
        // xstrings convert_test.go: TestToSnakeCaseAndToKebabCase; sprig strings_test.go:
        // TestCamelCase ("http_server" → "HttpServer").
        for (input, snake) in [
            ("HTTPServer", "http_server"),
            ("_camelCase", "_camel_case"),
            ("NoHTTPS", "no_https"),
            ("Wi_thF", "wi_th_f"),
            ("_AnotherTES_TCaseP", "_another_tes_t_case_p"),
            ("ALL", "all"),
            ("_HELLO_WORLD_", "_hello_world_"),
            ("HELLO_WORLD", "hello_world"),
            ("HELLO____WORLD", "hello____world"),
            ("TW", "tw"),
            ("_C", "_c"),
            ("http2xx", "http_2xx"),
            ("HTTP2XX", "http2_xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("HTTP20xStatus", "http_20x_status"),
            ("HTTP-20xStatus", "http_20x_status"),
            ("a", "a"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
            (" _-_ ", "_____"),
            ("a1b2c3d", "a_1b2c3d"),
            ("A//B%%2c", "a//b%%2c"),
            ("HTTP状态码404/502Error", "http_状态码404/502_error"),
            ("中文(字符)", "中文(字符)"),
            ("混合ABCWords与123数字456", "混合_abc_words_与123_数字456"),
            ("  sentence case  ", "__sentence_case__"),
            (
                " Mixed-hyphen case _and SENTENCE_case and UPPER-case",
                "_mixed_hyphen_case__and_sentence_case_and_upper_case",
            ),
            ("FROM CamelCase to snake/kebab-case", "from_camel_case_to_snake/kebab_case"),
            ("", ""),
            ("abc_123_def", "abc_123_def"),
        ] {
            assert_eq!(lower_words(input, '_'), snake, "{input:?}");
            assert_eq!(lower_words(input, '-'), snake.replace('_', "-"), "{input:?}");
        }
        // functions_test.go: TestSnakeCase, TestCamelCase, TestKebabCase.
        for (input, snake) in
            [("FirstName", "first_name"), ("GO_PATH", "go_path"), ("GO PATH", "go_path"), ("GO-PATH", "go_path")]
        {
            assert_eq!(lower_words(input, '_'), snake, "{input:?}");
        }
        for (input, pascal) in [
            ("http_server", "HttpServer"),
            ("_camel_case", "_CamelCase"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("all", "All"),
            ("", ""),
        ] {
            assert_eq!(pascal_case(input), pascal, "{input:?}");
        }
    }
}
