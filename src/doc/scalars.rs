//! Plain scalars whose type the YAML reader (serde-saphyr) decides otherwise than YAML and
//! Kubernetes do. It takes any capitalisation of `true`, `false` and `null` as a boolean or null
//! (`tRUE`, `nULL`), and any capitalisation of `.inf` and `.nan` as a non-finite float (`.iNf`,
//! `-.nan`). YAML 1.2's core schema, YAML 1.1 and Kubernetes' readers take only the spellings
//! YAML defines (`true`, `True`, `TRUE`, `null`, `Null`, `NULL`, `~`, `.inf`, `.Inf`, `.INF`
//! with a sign, `.nan`, `.NaN`, `.NAN`); every other spelling is text, and reading it as a
//! boolean would change a user's value.
//!
//! It also reads an integer beyond 64 bits as a float (`12345678901234567890123` as
//! `1.2345678901234568e22`); the value model keeps a number's digits (`doc::integers`), so such
//! an integer is put back with all of them.
//!
//! serde-saphyr has no hook for how it resolves a plain scalar, so this is done beside it: a
//! byte scan says whether a text holds such a word at all (almost none does), and only then a
//! walk over the parser's events (granit-parser, the parser serde-saphyr itself runs) finds the
//! plain, untagged scalars concerned, by byte offset. The value reader ([`super::Strict`]) then
//! asks serde-saphyr for each node's offset and puts the text back where it made a boolean, a
//! null or a non-finite float of one.

use super::integers::{has_long_digit_run, wide_integer};
use super::{Value, YamlError};
use granit_parser::{Event, Parser, ScalarStyle};
use std::cell::RefCell;
use std::collections::HashMap;

/// Whether `text` reads as that string in any YAML reader, without asking one (most
/// substituted values are names like `prod-eu`): a letter first, then only letters, digits,
/// `-`, `_`, `.` and `/`, and no word a reader takes for a boolean, a null or a float. Long
/// texts still go to the reader, which refuses a scalar beyond its limit.
pub fn plainly_text(text: &str) -> bool {
    const LONGEST: usize = 1024;
    if text.len() > LONGEST {
        return false;
    }
    const WORDS: [&str; 12] = ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "inf", "nan", "infinity"];
    let mut bytes = text.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
        && !WORDS.iter().any(|word| word.eq_ignore_ascii_case(text))
}

/// Whether `text` reads as that integer in any YAML reader, without asking one: `0`, or up to 18
/// digits without a leading zero (a leading zero is YAML 1.1's octal; longer runs may pass 64
/// bits, which `doc::integers` handles).
pub fn plainly_integer(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let digits = !bytes.is_empty() && bytes.len() <= 18 && bytes.iter().all(u8::is_ascii_digit);
    if !digits || (bytes.len() > 1 && bytes[0] == b'0') {
        return None;
    }
    text.parse().ok()
}

/// The values to put back, by the byte offset of the scalar they replace.
pub(super) type Fixes = HashMap<usize, Value>;

thread_local! {
    /// The fixes of the text being read on this thread, while [`with_fixes`] runs.
    static FIXING: RefCell<Option<Fixing>> = const { RefCell::new(None) };
}

struct Fixing {
    fixes: Fixes,
    /// Set by the value reader when serde-saphyr handed it a non-finite float, cleared by the
    /// node that holds it.
    non_finite: bool,
}

/// Whether a plain scalar's text is one of the words YAML defines as a boolean or null.
fn defined_word(text: &str) -> bool {
    matches!(text, "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "null" | "Null" | "NULL")
}

/// Whether a plain scalar's text is a non-finite float in the spellings YAML defines.
pub fn defined_non_finite(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN")
}

/// Whether serde-saphyr reads a plain scalar as a non-finite float: `.inf` or `.nan` in any
/// capitalisation with an optional sign.
fn reader_non_finite(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    unsigned.eq_ignore_ascii_case(".inf") || unsigned.eq_ignore_ascii_case(".nan")
}

/// Whether `text` may hold a scalar this module is about: a word that is some capitalisation of
/// `true`, `false`, `null`, `inf` or `nan` without being one of YAML's own spellings.
fn holds_suspect(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_alphabetic() {
            at += 1;
            continue;
        }
        let end = bytes[at..].iter().position(|b| !b.is_ascii_alphabetic()).map_or(bytes.len(), |n| at + n);
        let word = &text[at..end];
        let suspect = match word.len() {
            3 => word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("nan"),
            4 | 5 => misspelt_bool_or_null(word),
            _ => false,
        };
        if suspect {
            return true;
        }
        at = end;
    }
    false
}

/// What is wrong with a plain scalar that cannot be read at all.
pub(super) struct Refused {
    pub message: String,
    pub line: u64,
    pub column: u64,
}

/// The fixes `text` needs, and the first scalar it cannot be read with: an integer beyond 128
/// bits, or a non-finite float (neither has a JSON form; such a scalar reads as null
/// meanwhile, so that the reader still reports a syntax error first). Empty for almost every
/// text, found without parsing.
pub(super) fn fixes(text: &str) -> (Fixes, Option<Refused>) {
    let mut fixes = Fixes::new();
    let mut refused = None;
    let (words, digits) = (holds_suspect(text), has_long_digit_run(text));
    // Most texts hold neither: no walk.
    if !words && !digits {
        return (fixes, refused);
    }
    for event in Parser::new_from_str(text) {
        // The reader reports syntax errors in its own words.
        let Ok((event, span)) = event else { break };
        let Event::Scalar(value, ScalarStyle::Plain, _, None) = event else { continue };
        let Some(offset) = span.start.byte_offset() else { continue };
        let wide = if digits { wide_integer(&value) } else { None };
        if let Some(Some(number)) = wide {
            fixes.insert(offset, Value::Number(number));
            continue;
        }
        let message = if wide.is_some() {
            Some(super::oversized_integer_message(&value))
        } else if words && defined_non_finite(&value) {
            Some(non_finite_message(&value))
        } else {
            None
        };
        if let Some(message) = message {
            fixes.insert(offset, Value::Null);
            let (line, column) = (span.start.line() as u64, span.start.col() as u64 + 1);
            refused.get_or_insert(Refused { message, line, column });
            continue;
        }
        if words && (misspelt_bool_or_null(&value) || reader_non_finite(&value)) {
            fixes.insert(offset, Value::String(value.into_owned()));
        }
    }
    (fixes, refused)
}

/// Whether a word is `true`, `false` or `null` in a capitalisation YAML does not define
/// (`tRUE`, `nULL`): text, which serde-saphyr would type.
fn misspelt_bool_or_null(text: &str) -> bool {
    ["true", "false", "null"].iter().any(|word| text.eq_ignore_ascii_case(word)) && !defined_word(text)
}

/// What to tell the user about a non-finite float.
pub fn non_finite_message(literal: &str) -> String {
    format!(
        "{} is a non-finite float, which JSON and Kubernetes cannot hold: quote it (\"{}\") to keep it as text",
        super::excerpt(literal),
        super::excerpt(literal)
    )
}

/// Runs `read` with `fixes` in force for the value reader on this thread.
pub(super) fn with_fixes<T>(fixes: Fixes, read: impl FnOnce() -> T) -> T {
    FIXING.with(|fixing| *fixing.borrow_mut() = Some(Fixing { fixes, non_finite: false }));
    let result = read();
    FIXING.with(|fixing| *fixing.borrow_mut() = None);
    result
}

/// Whether the value reader must ask for each node's offset (a text with fixes is being read).
pub(super) fn fixing() -> bool {
    FIXING.with(|fixing| fixing.borrow().is_some())
}

/// The value reader met a non-finite float: remembered until its node asks [`fix`].
pub(super) fn saw_non_finite() {
    FIXING.with(|fixing| {
        if let Some(fixing) = fixing.borrow_mut().as_mut() {
            fixing.non_finite = true;
        }
    });
}

/// The value of the node at byte `offset`, which serde-saphyr read as `value`; an error for a
/// non-finite float no fix stands for.
pub(super) fn fix(offset: Option<usize>, value: Value) -> Result<Value, String> {
    FIXING.with(|fixing| {
        let mut fixing = fixing.borrow_mut();
        let Some(fixing) = fixing.as_mut() else { return Ok(value) };
        let non_finite = std::mem::take(&mut fixing.non_finite);
        if value.is_object() || value.is_array() {
            return Ok(value);
        }
        match offset.and_then(|offset| fixing.fixes.get(&offset)) {
            Some(fixed) => Ok(fixed.clone()),
            // A literal that overflows (`1e999`) reaches here when other fixes are made.
            None if non_finite => Err("a float too large for 64 bits (or infinite) has no JSON form: quote it to \
                                       keep it as text"
                .to_string()),
            None => Ok(value),
        }
    })
}

impl From<Refused> for YamlError {
    fn from(refused: Refused) -> Self {
        YamlError {
            message: refused.message,
            line: Some(refused.line),
            column: Some(refused.column),
            unrepresentable: true,
            hint_at: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_misspelt_words_are_suspect() {
        assert!(!holds_suspect("a: true\nb: False\nc: NULL\nd: truest\ne: nullable"));
        assert!(holds_suspect("a: tRUE"));
        assert!(holds_suspect("a: NuLl"));
        assert!(holds_suspect("a: .iNf"));
        assert!(holds_suspect("a: inf"));
    }

    #[test]
    fn fixes_are_found_by_offset() {
        let text = "a: tRUE\nb: 'tRUE'\nc: !!bool tRUE\nd: .iNf\ne: true\n";
        let (fixes, refused) = fixes(text);
        assert!(refused.is_none());
        assert_eq!(fixes.len(), 2, "{fixes:?}");
        assert_eq!(fixes.get(&3), Some(&Value::String("tRUE".into())));
        assert_eq!(fixes.get(&text.find(".iNf").unwrap_or_default()), Some(&Value::String(".iNf".into())));
    }

    #[test]
    fn defined_non_finite_spellings_are_refused() {
        for text in ["a: .inf", "a: -.Inf", "a: .NAN", "a: tRUE\nb: +.INF"] {
            assert!(fixes(text).1.is_some(), "{text}");
        }
        for text in ["a: '.inf'", "a: -.nan", "a: .nAn"] {
            assert!(fixes(text).1.is_none(), "{text}");
        }
    }
}
