//! Go's `strconv` number and boolean parsing, which KOTS's `ParseInt`/`ParseBool` and Sprig's
//! conversions (`cast.ToInt64` parses strings with base 0) expose to templates: the prefixes,
//! underscores and out-of-range results must be Go's, not Rust's.

/// Why a parse failed; a range error carries the clamped value Go returns with it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumError<T> {
    Syntax,
    Range(T),
    Base,
}

impl<T> NumError<T> {
    /// The value Go returns alongside the error (what `val, _ := strconv.ParseX(...)` keeps).
    pub fn value(self) -> T
    where
        T: Default,
    {
        match self {
            NumError::Range(value) => value,
            NumError::Syntax | NumError::Base => T::default(),
        }
    }
}

/// Whether `s`'s underscores sit between digits (or after a base prefix), as Go's syntax allows.
fn underscores_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let bytes = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if bytes.len() >= 2 && bytes[0] == b'0' && matches!(bytes[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = bytes[1].eq_ignore_ascii_case(&b'x');
    }
    for &c in &bytes[i..] {
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's `strconv.ParseUint(s, base, 64)`: base 0 reads `0x`, `0o`, `0b` and a leading `0`
/// (octal) and allows `_` between digits.
pub fn parse_uint(s: &str, base: i64) -> Result<u64, NumError<u64>> {
    if s.is_empty() {
        return Err(NumError::Syntax);
    }
    let base0 = base == 0;
    let (digits, base) = match base {
        0 => {
            let lower = s.get(..2).map(str::to_ascii_lowercase);
            match lower.as_deref() {
                Some("0x") => (&s[2..], 16),
                Some("0o") => (&s[2..], 8),
                Some("0b") => (&s[2..], 2),
                _ if s.len() > 1 && s.starts_with('0') => (&s[1..], 8),
                _ => (s, 10),
            }
        }
        2..=36 => (s, base as u32),
        _ => return Err(NumError::Base),
    };
    if digits.is_empty() || base0 && !underscores_ok(s) {
        return Err(NumError::Syntax);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        if c == '_' && base0 {
            continue;
        }
        let Some(digit) = c.to_digit(base) else { return Err(NumError::Syntax) };
        match value.checked_mul(u64::from(base)).and_then(|v| v.checked_add(u64::from(digit))) {
            Some(next) => value = next,
            None => overflow = true,
        }
    }
    if overflow {
        return Err(NumError::Range(u64::MAX));
    }
    Ok(value)
}

/// Go's `strconv.ParseInt(s, base, 64)`.
pub fn parse_int(s: &str, base: i64) -> Result<i64, NumError<i64>> {
    if s.is_empty() {
        return Err(NumError::Syntax);
    }
    let (negative, body) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let clamp = if negative { i64::MIN } else { i64::MAX };
    let magnitude = match parse_uint(body, base) {
        Ok(magnitude) => magnitude,
        Err(NumError::Range(_)) => return Err(NumError::Range(clamp)),
        Err(NumError::Syntax) => return Err(NumError::Syntax),
        Err(NumError::Base) => return Err(NumError::Base),
    };
    if negative {
        match magnitude {
            m if m <= i64::MAX as u64 => Ok(-(m as i64)),
            m if m == i64::MAX as u64 + 1 => Ok(i64::MIN),
            _ => Err(NumError::Range(clamp)),
        }
    } else {
        i64::try_from(magnitude).map_err(|_| NumError::Range(clamp))
    }
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal text and `inf`/`infinity`/`nan` (any case, with
/// a sign); out of range is a range error carrying ±Inf. Hexadecimal floats (`0x1p-2`) and
/// underscores are refused (Go reads them).
pub fn parse_float(s: &str) -> Result<f64, NumError<f64>> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s).to_ascii_lowercase();
    let special = matches!(body.as_str(), "inf" | "infinity" | "nan");
    if !special && !s.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) {
        return Err(NumError::Syntax);
    }
    match s.parse::<f64>() {
        Ok(value) if value.is_infinite() && !special => Err(NumError::Range(value)),
        Ok(value) => Ok(value),
        Err(_) => Err(NumError::Syntax),
    }
}

/// Go's `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_integers() {
        assert_eq!(parse_int("-15", 10), Ok(-15));
        assert_eq!(parse_int("0x1F", 0), Ok(31));
        assert_eq!(parse_int("010", 0), Ok(8));
        assert_eq!(parse_int("1_000", 0), Ok(1000));
        assert_eq!(parse_int("1_000", 10), Err(NumError::Syntax));
        assert_eq!(parse_int("_1", 0), Err(NumError::Syntax));
        assert_eq!(parse_int("ff", 16), Ok(255));
        assert_eq!(parse_int("99999999999999999999", 10), Err(NumError::Range(i64::MAX)));
        assert_eq!(parse_int("-9223372036854775808", 10), Ok(i64::MIN));
        assert_eq!(parse_int("1", 37), Err(NumError::Base));
        assert_eq!(parse_int(" 1", 10), Err(NumError::Syntax));
        assert_eq!(parse_uint("-1", 10), Err(NumError::Syntax));
        assert_eq!(parse_uint("0b101", 0), Ok(5));
    }

    #[test]
    fn go_floats_and_bools() {
        assert_eq!(parse_float("1.5"), Ok(1.5));
        assert_eq!(parse_float("-1e3"), Ok(-1000.0));
        assert_eq!(parse_float("+Inf"), Ok(f64::INFINITY));
        assert_eq!(parse_float("1e400"), Err(NumError::Range(f64::INFINITY)));
        assert_eq!(parse_float("1.5x"), Err(NumError::Syntax));
        assert_eq!(parse_bool("True"), Some(true));
        assert_eq!(parse_bool("yes"), None);
    }
}
