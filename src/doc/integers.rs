//! Integers beyond 64 bits. serde-saphyr reads them as floats, so
//! `12345678901234567890123` would come out as `1.2345678901234568e+22`: a changed value,
//! written back with exit 0. The value model keeps a number's digits (serde_json with
//! `arbitrary_precision`), so the YAML reader puts such an integer back with all its digits
//! (`doc::scalars`), and JSON's reader keeps them itself. The YAML writer has 128-bit integers
//! at most, so a literal beyond 128 bits is refused with its position and the advice to quote it.
//! Only input that holds a run of 19 digits pays for the second look (a parser event walk for
//! YAML, a token scan for JSON).

use serde_json::Number;

/// The shortest digit run that may not fit: i64 has 19 digits, u64 20.
const SUSPECT_DIGITS: usize = 19;
/// The same for hexadecimal after `0x`: u64 has 16 digits.
const SUSPECT_HEX_DIGITS: usize = 17;

/// Whether `text` may hold an integer beyond 64 bits: a run of 19 decimal digits (which covers
/// octal), or `0x` and 17 hexadecimal ones.
pub(super) fn has_long_digit_run(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut run = 0;
    for (at, byte) in bytes.iter().enumerate() {
        run = if byte.is_ascii_digit() { run + 1 } else { 0 };
        if run >= SUSPECT_DIGITS {
            return true;
        }
        if (byte | 0x20) == b'x' && at > 0 && bytes[at - 1] == b'0' {
            let hex = bytes[at + 1..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if hex >= SUSPECT_HEX_DIGITS {
                return true;
            }
        }
    }
    false
}

/// An integer literal no 64-bit integer holds, as YAML (decimal with an optional sign, 0x, 0o,
/// and YAML 1.1's octal `0644`, which the reader takes) or JSON read it: `Some(Some(number))`
/// within 128 bits, `Some(None)` beyond; `None` for everything else.
pub(super) fn wide_integer(literal: &str) -> Option<Option<Number>> {
    let negative = literal.starts_with('-');
    let unsigned = literal.strip_prefix(['-', '+']).unwrap_or(literal);
    let (digits, radix) = match unsigned.get(..2) {
        Some("0x") => (&unsigned[2..], 16),
        Some("0o") => (&unsigned[2..], 8),
        _ if unsigned.len() > 1 && unsigned.starts_with('0') => (&unsigned[1..], 8),
        _ => (unsigned, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let fits = if negative {
        i64::from_str_radix(&format!("-{digits}"), radix).is_ok()
    } else {
        u64::from_str_radix(digits, radix).is_ok()
    };
    if fits {
        return None;
    }
    Some(if negative {
        i128::from_str_radix(&format!("-{digits}"), radix).ok().and_then(Number::from_i128)
    } else {
        u128::from_str_radix(digits, radix).ok().and_then(Number::from_u128)
    })
}

/// The byte offset and literal of a JSON number token (outside strings, without fraction or
/// exponent) too large for 128 bits.
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
                if matches!(wide_integer(literal), Some(None)) {
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
        "the integer {} is too large for 128 bits and would lose digits: quote it (\"{}\") to keep it as written",
        super::excerpt(literal),
        super::excerpt(literal)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(literal: &str) -> Option<Option<String>> {
        wide_integer(literal).map(|number| number.map(|number| number.to_string()))
    }

    #[test]
    fn integers_beyond_64_bits_keep_their_digits_up_to_128() {
        assert_eq!(wide("9223372036854775807"), None);
        assert_eq!(wide("18446744073709551615"), None);
        assert_eq!(wide("-9223372036854775808"), None);
        assert_eq!(wide("1.23456789012345678901"), None);
        assert_eq!(wide("12345678901234567890123"), Some(Some("12345678901234567890123".into())));
        assert_eq!(wide("+12345678901234567890123"), Some(Some("12345678901234567890123".into())));
        assert_eq!(wide("-9223372036854775809"), Some(Some("-9223372036854775809".into())));
        assert_eq!(wide("0x10000000000000000"), Some(Some("18446744073709551616".into())));
        assert_eq!(wide("02000000000000000000000"), Some(Some("18446744073709551616".into())));
        assert_eq!(wide("1234567890123456789012345678901234567890"), Some(None));
    }

    #[test]
    fn long_runs_are_suspect() {
        assert!(!has_long_digit_run("a: 123456789012345678\nb: 0xffffffffffffffff"));
        assert!(has_long_digit_run("a: 1234567890123456789"));
        assert!(has_long_digit_run("a: 0x10000000000000000"));
        assert!(has_long_digit_run("a: 0X1fffffffffffffffff"));
    }

    #[test]
    fn json_integers_beyond_128_bits_are_found() {
        assert_eq!(oversized_json_integer(r#"{"a": "1234567890123456789012345678901234567890", "b": 1e30}"#), None);
        assert_eq!(oversized_json_integer(r#"{"a": 12345678901234567890123}"#), None);
        assert_eq!(
            oversized_json_integer(r#"{"a": 1234567890123456789012345678901234567890}"#),
            Some((6, "1234567890123456789012345678901234567890".into()))
        );
        assert_eq!(oversized_json_integer(r#"{"a": 1.2345678901234567890123}"#), None);
    }
}
