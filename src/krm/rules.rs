//! The scalar and key rules every reader of an item shares with the full reader (`doc`): which
//! plain scalars are null, booleans, numbers or text, which keys are plain text, which tags
//! read as text, how deep a value may nest, and the duplicate-key check. The line reader
//! (`krm::block`), the event walk (`krm::walk`) and the splice (`krm::splice`) all read by these
//! rules, so that what they prove and build is what the full reader would. A leaf: it uses
//! nothing else in `krm`.

use crate::doc::{Strict, Value};
use granit_parser::{ScalarStyle, Tag};
use std::borrow::Cow;

/// Deeper nesting is left to the full reader, whose budget and messages apply.
pub(super) const MAX_DEPTH: usize = 200;

/// Mappings with more keys check duplicates with a hash set.
pub(super) const LINEAR_KEYS: usize = 16;

/// The style a scalar is read by: its own when untagged; that of a quoted scalar when tagged
/// `!!str` or `!!binary`, which the full reader reads as their text (`doc::yaml`: a `!!binary`
/// scalar is kept as written, not decoded); `None` for other tags, left to the full reader.
pub(super) fn read_style(style: ScalarStyle, tag: Option<&Tag>) -> Option<ScalarStyle> {
    match tag {
        None => Some(style),
        Some(tag) if tag.handle() == "tag:yaml.org,2002:" && matches!(tag.suffix(), "str" | "binary") => {
            Some(if style == ScalarStyle::Plain { ScalarStyle::SingleQuoted } else { style })
        }
        Some(_) => None,
    }
}

/// A key the full reader takes as the same text: not a merge key, and when plain, a string.
/// A plain key some YAML reads otherwise (`y`, `on`, `1`) is asked: without asking, one `y:`
/// in an item made every change to it rewrite the whole item (`y:` quoted, flow style lost).
pub(super) fn plain_text_key(key: &str, style: ScalarStyle) -> bool {
    key != "<<"
        && (style != ScalarStyle::Plain
            || match resolve(key) {
                Resolved::Text => true,
                // The full reader refuses any spelling of `null` as a key (`nULL` reads as text
                // elsewhere): leave those to it.
                Resolved::Ask if key.eq_ignore_ascii_case("null") => false,
                Resolved::Ask => matches!(ask(key), Some(Value::String(text)) if text == key),
                Resolved::Null | Resolved::Bool(_) => false,
            })
}

/// What the full reader makes of a plain scalar, when that is sure without asking it.
#[derive(Debug, PartialEq)]
enum Resolved {
    Null,
    Bool(bool),
    Text,
    /// Looks like a number: ask the full reader.
    Ask,
}

/// serde-saphyr with our options (`strict_booleans`, `legacy_octal_numbers`) reads nothing
/// but null, booleans, numbers and text from an untagged plain scalar. Sure: the empty text and
/// `~` are null, and text is text unless it is a word some YAML reads otherwise (in any case:
/// `Null`, `tRUE`, `yes`, `inf`…) or starts, after a sign, with a digit or a dot. The rest is asked.
fn resolve(text: &str) -> Resolved {
    const WORDS: [&str; 12] = ["null", "true", "false", "yes", "no", "on", "off", "y", "n", "inf", "nan", "infinity"];
    match text {
        "" | "~" => Resolved::Null,
        "true" => Resolved::Bool(true),
        "false" => Resolved::Bool(false),
        _ if text.len() <= 8
            && matches!(text.as_bytes()[0] | 0x20, b'n' | b't' | b'f' | b'y' | b'o' | b'i')
            && WORDS.iter().any(|word| text.eq_ignore_ascii_case(word)) =>
        {
            Resolved::Ask
        }
        _ => {
            let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
            match unsigned.bytes().next() {
                Some(b'0'..=b'9' | b'.') if number_like(unsigned) => Resolved::Ask,
                _ => Resolved::Text,
            }
        }
    }
}

/// Whether an unsigned scalar starting with a digit or a dot may be a number in some YAML
/// spelling (`0x1F`, `0o17`, `0b101`, `1_000`, `1e3`, `12:30`, `.inf`): quantities such as
/// `100m` and `128Mi` hold a letter no number has, and are text without asking.
fn number_like(unsigned: &str) -> bool {
    if let Some(word) = unsigned.strip_prefix('.') {
        if word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("nan") {
            return true;
        }
    }
    unsigned
        .bytes()
        .all(|b| b.is_ascii_hexdigit() || matches!(b, b'x' | b'X' | b'o' | b'O' | b'_' | b'.' | b':' | b'+' | b'-'))
}

/// Whether a scalar reads as `value` (see [`scalar`]), without building a value.
pub(super) fn scalar_is(text: &str, style: ScalarStyle, value: &Value) -> bool {
    if style != ScalarStyle::Plain {
        return value.as_str() == Some(text);
    }
    match resolve(text) {
        Resolved::Null => value.is_null(),
        Resolved::Bool(b) => value.as_bool() == Some(b),
        Resolved::Text => value.as_str() == Some(text),
        Resolved::Ask if value.is_object() || value.is_array() => false,
        Resolved::Ask => decimal(text).or_else(|| ask(text)).as_ref() == Some(value),
    }
}

/// A scalar's value; `None` when only the full reader can say.
pub(super) fn scalar(value: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(value.into_owned()));
    }
    match resolve(&value) {
        Resolved::Null => Some(Value::Null),
        Resolved::Bool(b) => Some(Value::Bool(b)),
        Resolved::Text => Some(Value::String(value.into_owned())),
        Resolved::Ask => decimal(&value).or_else(|| ask(&value)),
    }
}

/// The common number spellings, read without asking: an optional minus and up to 18 decimal
/// digits without a leading zero, or a zero and up to 20 octal digits (YAML 1.1's `0644`, which
/// the full reader reads as octal: file modes in every Deployment's volumes).
fn decimal(text: &str) -> Option<Value> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if let Some(octal) = digits.strip_prefix('0').filter(|octal| !octal.is_empty()) {
        if octal.len() > 20 || !octal.bytes().all(|b| matches!(b, b'0'..=b'7')) {
            return None;
        }
        let magnitude = i64::from_str_radix(octal, 8).ok()?;
        return Some(if text.starts_with('-') { Value::from(-magnitude) } else { Value::from(magnitude as u64) });
    }
    let plain = !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit());
    if !plain {
        return None;
    }
    let number: i64 = text.parse().ok()?;
    // Unsigned when not negative, as the full reader visits it.
    Some(match u64::try_from(number) {
        Ok(unsigned) => Value::from(unsigned),
        Err(_) => Value::from(number),
    })
}

/// The full reader's value of a number-like plain scalar standing alone; `None` when it is not
/// one plain scalar on its own (whitespace, or it reads as a collection), or not a finite value.
fn ask(text: &str) -> Option<Value> {
    if text.contains(char::is_whitespace) || !finite(text) {
        return None;
    }
    // In a list: the reader takes a document of only a null-like word (`nULL`) for no document.
    let mut documents = crate::doc::read_yaml_documents_as::<Strict>(&format!("- {text}")).ok()?;
    match documents.pop() {
        Some(Strict(Value::Array(mut list))) if documents.is_empty() && list.len() == 1 => {
            list.pop().filter(|value| !value.is_object() && !value.is_array())
        }
        _ => None,
    }
}

/// Whether a plain scalar is not one the full reader reads as an infinite or NaN float (which it
/// refuses or turns into null): `.inf`, `.nan` in their spellings, or a literal that overflows.
pub(super) fn finite(text: &str) -> bool {
    if !matches!(resolve(text), Resolved::Ask) {
        return true;
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned.starts_with('.') {
        // Other spellings (`.iNf`, `-.nan`) are text (`doc::scalars`).
        return !crate::doc::defined_non_finite(text);
    }
    !(unsigned.starts_with(|c: char| c.is_ascii_digit()) && text.parse::<f64>().is_ok_and(f64::is_infinite))
}

/// The digit run past which an integer may not fit in 64 bits (the full reader checks those).
pub(super) fn has_long_digit_run(text: &str) -> bool {
    const RUN: usize = 19;
    let bytes = text.as_bytes();
    // Any run of RUN digits covers one of every RUN consecutive positions: look at those, and
    // measure the run around each digit found there.
    let mut at = RUN - 1;
    while let Some(byte) = bytes.get(at) {
        if !byte.is_ascii_digit() {
            at += RUN;
            continue;
        }
        let start = bytes[..at].iter().rposition(|b| !b.is_ascii_digit()).map_or(0, |p| p + 1);
        let end = bytes[at..].iter().position(|b| !b.is_ascii_digit()).map_or(bytes.len(), |p| at + p);
        if end - start >= RUN {
            return true;
        }
        at = end + RUN;
    }
    false
}

/// The keys of one mapping, for the duplicate check.
#[derive(Default)]
pub(super) struct KeySet<'a> {
    few: Vec<Cow<'a, str>>,
    many: Option<std::collections::HashSet<Cow<'a, str>>>,
}

impl<'a> KeySet<'a> {
    /// Adds `key`; false when it was there.
    pub(super) fn insert(&mut self, key: Cow<'a, str>) -> bool {
        if let Some(many) = &mut self.many {
            return many.insert(key);
        }
        if self.few.contains(&key) {
            return false;
        }
        self.few.push(key);
        if self.few.len() > LINEAR_KEYS {
            self.many = Some(self.few.drain(..).collect());
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_digit_runs_are_found_wherever_they_are() {
        let naive = |text: &str| {
            let mut run = 0;
            text.bytes().any(|byte| {
                run = if byte.is_ascii_digit() { run + 1 } else { 0 };
                run >= 19
            })
        };
        let mut seed = 19u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..100_000 {
            // Digit runs of random lengths around 19, between other bytes.
            let (len, gap) = (next(80), 10 + next(20));
            let text: String =
                (0..len).map(|_| if next(gap) == 0 { 'x' } else { char::from(b'0' + next(10) as u8) }).collect();
            assert_eq!(has_long_digit_run(&text), naive(&text), "{text:?}");
        }
        assert!(has_long_digit_run("a: 1234567890123456789"));
        assert!(!has_long_digit_run("a: 123456789012345678 b: 123456789012345678"));
    }

    /// The full reader's value of a plain scalar, for comparison.
    fn full(text: &str) -> Option<Value> {
        let mut documents = crate::doc::read_yaml_documents_as::<Strict>(&format!("k: {text}\n")).ok()?;
        documents.pop()?.0.get("k").cloned()
    }

    #[test]
    fn plain_scalars_read_as_the_full_reader_reads_them() {
        let cases = [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "nULL",
            "true",
            "True",
            "TRUE",
            "tRUE",
            "false",
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "Y",
            "0644",
            "-0644",
            "+0644",
            "00",
            "-00",
            "007",
            "08",
            "0_644",
            "01234567012345670123",
            "012345670123456701234",
            "0777777777777777777777",
            "0",
            "-0",
            "+1",
            "1.50",
            "1e3",
            "1E3",
            "-1e-3",
            "0x1F",
            "0o17",
            "0b101",
            ".5",
            "-.5",
            "1_000",
            "12:30",
            "1.2.3",
            "10.0.0.1",
            "10.0.0.1:5000/img",
            "1/2",
            "inf",
            "nan",
            "Infinity",
            "-inf",
            "1.0.0-alpha",
            "3m",
            "100Mi",
            "0.5",
            "1e",
            "e1",
            "+",
            "-a",
            "+a",
            ".",
            "..",
            "._",
            "0.",
            "00",
            "08",
            "09",
            "-08",
            "0x",
            "0xZ",
            "1__2",
            "9223372036854775807",
            "18446744073709551615",
            "-9223372036854775808",
            "100m",
            "128Mi",
            "1h30m",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14",
            "1.0.0-rc1",
            "0x1g",
            "1 2",
            "12:30:00",
            "1e3",
            "0o17",
            "0b101",
            "1_000",
            ".5",
            "+.5",
            "-1.5E+3",
        ];
        for text in cases {
            let ours = scalar(Cow::Borrowed(text), ScalarStyle::Plain);
            if let Some(ours) = ours {
                assert_eq!(Some(ours), full(text), "{text:?}");
            }
        }
        // Sure answers are never asked.
        for text in
            ["web", "eu-west-1", "-a", "", "true", "registry.example.com/x:1.0", "nulls", "Yess", "100m", "128Mi"]
        {
            assert_ne!(resolve(text), Resolved::Ask, "{text:?}");
        }
    }

    #[test]
    fn non_finite_floats_are_left_to_the_full_reader() {
        for text in [".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1e999", "-9e400"] {
            assert!(!finite(text), "{text:?}");
        }
        for text in ["1e3", ".5", "inf", "nan", "web", "1.0"] {
            assert!(finite(text), "{text:?}");
        }
    }
}

#[cfg(test)]
mod key_tests {
    use super::*;

    /// Every plain key taken as text is the text the full reader makes of it, and the keys
    /// some YAML reads as another type are taken when the full reader agrees.
    #[test]
    fn plain_keys_taken_as_text_are_what_the_full_reader_reads() {
        let keys = [
            "y", "Y", "n", "yes", "No", "on", "OFF", "true", "False", "null", "Null", "~", "1", "0644", "1e3", "0x1F",
            "1_000", "12:30", ".5", "+1", "-", ".inf", "inf", "nan", "a", "100m", "2.2.0", "nULL", "NuLl", "nuLL",
        ];
        for key in keys {
            let text = format!("{key}: v\n");
            let full = crate::doc::read_yaml_documents_as::<Strict>(&text).ok().and_then(|mut d| d.pop());
            let full_key = full.as_ref().and_then(|d| d.0.as_object()).and_then(|m| m.keys().next().cloned());
            if plain_text_key(key, ScalarStyle::Plain) {
                assert_eq!(full_key.as_deref(), Some(key), "{key:?} taken as text, the full reader reads {full_key:?}");
            }
        }
        assert!(plain_text_key("y", ScalarStyle::Plain));
        assert!(plain_text_key("on", ScalarStyle::Plain));
        assert!(!plain_text_key("nULL", ScalarStyle::Plain));
    }
}
