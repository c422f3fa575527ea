//! Integers too large for 64 bits. The value model (serde_json without arbitrary precision) and
//! the YAML reader under it (serde-saphyr) turn them into floats, so
//! `123456789012345678901234567890` would come out as `1.2345678901234568e+29`: a changed value,
//! written back with exit 0. Until the model keeps number text as written, such input is refused
//! with the literal and its position, and the advice to quote it. Only input that holds a run of
//! 19 digits pays for the second look (a parser event walk for YAML, a token scan for JSON).

use granit_parser::{Event, Parser, ScalarStyle};

/// The shortest digit run that may not fit: i64 has 19 digits, u64 20.
const SUSPECT_DIGITS: usize = 19;

pub(super) fn has_long_digit_run(text: &str) -> bool {
    let mut run = 0;
    for byte in text.bytes() {
        run = if byte.is_ascii_digit() { run + 1 } else { 0 };
        if run >= SUSPECT_DIGITS {
            return true;
        }
    }
    false
}

/// Whether `literal` is an integer as YAML 1.2's core schema or JSON read it (decimal with an
/// optional sign, or 0x/0o) that no 64-bit integer holds.
pub(super) fn too_large(literal: &str) -> bool {
    let unsigned = literal.strip_prefix(['-', '+']).unwrap_or(literal);
    let (digits, radix) = match unsigned.get(..2) {
        Some("0x") => (&unsigned[2..], 16),
        Some("0o") => (&unsigned[2..], 8),
        _ => (unsigned, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return false;
    }
    let fits = if literal.starts_with('-') {
        i64::from_str_radix(&format!("-{digits}"), radix).is_ok()
    } else {
        u64::from_str_radix(digits, radix).is_ok()
    };
    !fits
}

/// An integer too large for 64 bits, found as a plain scalar of YAML text: its (line, column)
/// and literal.
pub fn oversized_yaml_integer(text: &str) -> Option<(u64, u64, String)> {
    if !has_long_digit_run(text) {
        return None;
    }
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { return None };
        if let Event::Scalar(value, ScalarStyle::Plain, ..) = event {
            if too_large(&value) {
                return Some((span.start.line() as u64, span.start.col() as u64 + 1, value.to_string()));
            }
        }
    }
    None
}

/// As [`oversized_yaml_integer`], for JSON text: the byte offset and literal of a number token
/// (outside strings, without fraction or exponent) too large for 64 bits.
pub fn oversized_json_integer(text: &str) -> Option<(usize, String)> {
    if !has_long_digit_run(text) {
        return None;
    }
    let bytes = text.as_bytes();
    let (mut in_string, mut escaped, mut at) = (false, false, 0);
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'-' | b'0'..=b'9' => {
                let start = at;
                while at + 1 < bytes.len() && matches!(bytes[at + 1], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    at += 1;
                }
                let literal = &text[start..=at];
                if too_large(literal) {
                    return Some((start, literal.to_string()));
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// What to tell the user about `literal`.
pub fn oversized_integer_message(literal: &str) -> String {
    format!(
        "the integer {} is too large for 64 bits and would lose digits: quote it (\"{}\") to keep it as written",
        super::excerpt(literal),
        super::excerpt(literal)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_integers_beyond_64_bits_are_found() {
        assert_eq!(oversized_yaml_integer("a: 9223372036854775807\nb: 18446744073709551615\n"), None);
        assert_eq!(oversized_yaml_integer("a: -9223372036854775808\n"), None);
        assert_eq!(
            oversized_yaml_integer("a: 1\nb: 123456789012345678901234567890\n"),
            Some((2, 4, "123456789012345678901234567890".into()))
        );
        assert!(oversized_yaml_integer("a: -9223372036854775809\n").is_some());
        assert_eq!(oversized_yaml_integer("a: \"123456789012345678901234567890\"\n"), None);
        assert_eq!(oversized_yaml_integer("a: |\n  123456789012345678901234567890\n"), None);
        assert_eq!(oversized_yaml_integer("# 123456789012345678901234567890\na: 1.23456789012345678901\n"), None);
        assert_eq!(oversized_json_integer(r#"{"a": "123456789012345678901234567890", "b": 1e30}"#), None);
        assert_eq!(
            oversized_json_integer(r#"{"a": 12345678901234567890123}"#),
            Some((6, "12345678901234567890123".into()))
        );
        assert_eq!(oversized_json_integer(r#"{"a": 1.2345678901234567890123}"#), None);
    }
}
