//! YAML text as Landscaper's `toYaml` writes it: sigs.k8s.io/yaml's `Marshal`, which writes the
//! value as JSON and has gopkg.in/yaml.v2 read that and write it again. So map keys are sorted
//! in yaml.v2's natural order, numbers are what Go's JSON and yaml.v2 make of a float64 or an
//! integer, and each string is plain, single-quoted, double-quoted or a literal block as yaml.v2
//! and its emitter (a port of libyaml) choose. Templates print this text into manifests, so the
//! text itself must match, not only what it reads as. Written by hand: no YAML crate writes
//! yaml.v2's choices (serde-saphyr quotes more, to be safe for YAML 1.1 readers, and double-quotes
//! where yaml.v2 single-quotes). `tests/data/toyaml-go.jsonl` holds real Go's answers.

use super::Value;
use std::cmp::Ordering;

/// The YAML of `value` as sigs.k8s.io/yaml writes it, ending in a line break.
pub fn to_go_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(map, 0, &mut out),
        Value::Array(list) if !list.is_empty() => sequence(list, 0, &mut out),
        scalar => {
            out.push_str(&scalar_text(scalar, 0));
            out.push('\n');
        }
    }
    out
}

fn mapping(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by(|a, b| natural(a, b));
    for key in keys {
        out.push_str(&" ".repeat(indent));
        out.push_str(&string_text(key, indent, true));
        out.push(':');
        nested(&map[key.as_str()], indent, true, out);
    }
}

fn sequence(list: &[Value], indent: usize, out: &mut String) {
    for value in list {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        nested(value, indent, false, out);
    }
}

/// A value after `key:` or `-`: a scalar on the same line; a mapping below, indented by two
/// (after `-`, its first key on the same line); a sequence below a key at the key's indentation,
/// as yaml.v2 writes it.
fn nested(value: &Value, indent: usize, after_key: bool, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            if after_key {
                out.push('\n');
                mapping(map, indent + 2, out);
            } else {
                out.push(' ');
                let mut first = String::new();
                mapping(map, indent + 2, &mut first);
                out.push_str(first.get(indent + 2..).unwrap_or_default());
            }
        }
        Value::Array(list) if !list.is_empty() => {
            if after_key {
                out.push('\n');
                sequence(list, indent, out);
            } else {
                out.push(' ');
                let mut first = String::new();
                sequence(list, indent + 2, &mut first);
                out.push_str(first.get(indent + 2..).unwrap_or_default());
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar, indent));
            out.push('\n');
        }
    }
}

fn scalar_text(value: &Value, indent: usize) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_text(n),
        Value::String(s) => string_text(s, indent, false),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// Go's JSON writes a float64 without a fraction as an integer below 1e21; yaml.v2 reads that as
/// an int when it fits 64 bits and writes it back as it is, else as a float64 (`%g`, shortest).
fn number_text(n: &serde_json::Number) -> String {
    let text = n.to_string();
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(i) = text.parse::<i64>() {
            return i.to_string();
        }
        if let Ok(u) = text.parse::<u64>() {
            return u.to_string();
        }
    }
    let Ok(f) = text.parse::<f64>() else { return text };
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f.abs() < 9.2e18 {
            // The float's integer value, as Go's JSON prints it; -0 is 0.
            return format!("{}", f as i64);
        }
        if f > 0.0 && f < 1.8e19 {
            return format!("{}", f as u64);
        }
    }
    go_g(f)
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, with an exponent of at least two
/// digits when it is below -4 or at least 6.
fn go_g(f: f64) -> String {
    let exponent_form = format!("{f:e}");
    let (mantissa, exponent) = exponent_form.split_once('e').unwrap_or((&exponent_form, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        format!("{f}")
    }
}

/// How yaml.v2 writes a string: a literal block for text of several lines (double-quoted where a
/// block cannot hold it), double quotes for text a YAML 1.1 reader would take for another type,
/// plain where its emitter allows, else single quotes (double where those cannot hold it).
fn string_text(s: &str, indent: usize, key: bool) -> String {
    let analysis = analyze_scalar(s);
    if s.contains('\n') {
        if !key && analysis.block_allowed {
            // yaml.v2 indents a block by two under its key or `-`.
            return literal_block(s, indent + 2);
        }
        return double_quoted(s);
    }
    if !resolves_as_string(s) {
        return double_quoted(s);
    }
    if analysis.plain_allowed {
        return s.to_string();
    }
    if analysis.single_quoted_allowed {
        return format!("'{}'", s.replace('\'', "''"));
    }
    double_quoted(s)
}

/// Whether yaml.v2's resolver reads `s`, written plain, as a string: not null, a boolean, a
/// number, a timestamp, or a base-60 float (which yaml.v2 quotes for YAML 1.1 readers). A float's
/// syntax counts even where Go cannot parse the value (`1e400`, which yaml.v2 writes plain and
/// reads as text): this project's reader refuses such a float, so it is quoted
/// (docs/compatibility.md).
fn resolves_as_string(s: &str) -> bool {
    const OTHER: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True",
        "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", ".inf", ".Inf", ".INF", "+.inf",
        "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN",
    ];
    if OTHER.contains(&s) {
        return false;
    }
    let plain = s.replace('_', "");
    let unsigned = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    let go_int = |digits: &str, radix: u32| !digits.is_empty() && u64::from_str_radix(digits, radix).is_ok();
    let is_int = match unsigned.get(..2) {
        Some("0x" | "0X") => go_int(&unsigned[2..], 16),
        Some("0o" | "0O") => go_int(&unsigned[2..], 8),
        Some("0b" | "0B") => go_int(&unsigned[2..], 2),
        _ if unsigned.len() > 1 && unsigned.starts_with('0') => go_int(&unsigned[1..], 8),
        _ => go_int(unsigned, 10),
    };
    if is_int || is_yaml_float(&plain) || is_base60(s) || is_timestamp(s) {
        return false;
    }
    true
}

/// yaml.v2's timestamp forms: `2006-1-2`, `2006-1-2 15:4:5.999999999`, and the `T`/`t` forms
/// with a zone (`Z` or `±07:00`).
fn is_timestamp(s: &str) -> bool {
    fn number(text: &str, min: usize, max: usize) -> bool {
        (min..=max).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
    }
    let date = |d: &str| {
        let parts: Vec<&str> = d.split('-').collect();
        parts.len() == 3 && number(parts[0], 4, 4) && number(parts[1], 1, 2) && number(parts[2], 1, 2)
    };
    let time = |t: &str| {
        let (clock, fraction) = t.split_once('.').unwrap_or((t, "0"));
        let parts: Vec<&str> = clock.split(':').collect();
        parts.len() == 3 && parts.iter().all(|p| number(p, 1, 2)) && number(fraction, 1, 9)
    };
    if date(s) {
        return true;
    }
    if let Some((d, t)) = s.split_once(' ') {
        return date(d) && time(t);
    }
    if let Some((d, rest)) = s.split_once(['T', 't']) {
        let (t, zone_ok) = match rest.strip_suffix('Z') {
            Some(t) => (t, true),
            None => match rest.rfind(['+', '-']) {
                Some(at) => {
                    let zone = &rest[at + 1..];
                    let ok = zone.split_once(':').is_some_and(|(h, m)| number(h, 2, 2) && number(m, 2, 2));
                    (&rest[..at], ok)
                }
                None => (rest, false),
            },
        };
        return date(d) && zone_ok && time(t);
    }
    false
}

/// A literal block as libyaml's emitter writes it, lines indented by `width` spaces: `|` with
/// `-` (no final line break) or `+` (more than one), and an indentation indicator (`width`) when
/// the text starts with a space or a line break. No line break after the last line.
pub fn literal_block(s: &str, width: usize) -> String {
    let mut out = String::from("|");
    if s.starts_with([' ', '\n']) {
        out.push_str(&width.to_string());
    }
    let body = s.strip_suffix('\n');
    match body {
        None => out.push('-'),
        Some(body) if body.ends_with('\n') || body.is_empty() => out.push('+'),
        Some(_) => {}
    }
    let pad = " ".repeat(width);
    for line in body.unwrap_or(s).split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    out
}

/// yaml.v2's key order (`keyList.Less`): runs of digits compare as numbers, a letter after a
/// non-letter, otherwise by character.
fn natural(a: &str, b: &str) -> Ordering {
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl { Ordering::Less } else { Ordering::Greater };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.saturating_mul(10).saturating_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.saturating_mul(10).saturating_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

/// What libyaml's emitter allows for a scalar (`yaml_emitter_analyze_scalar`), in a block context
/// (flow indicators do not matter there). Shared by yaml.v2's and yaml.v3's writers, which both
/// run libyaml's emitter.
pub struct ScalarAnalysis {
    pub plain_allowed: bool,
    pub single_quoted_allowed: bool,
    pub block_allowed: bool,
}

/// libyaml's `is_printable` as yaml.v3 uses it (with Unicode output).
fn printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && c != '\u{FEFF}'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's `yaml_emitter_analyze_scalar`, for a block-context scalar.
pub fn analyze_scalar(s: &str) -> ScalarAnalysis {
    if s.is_empty() {
        return ScalarAnalysis { plain_allowed: false, single_quoted_allowed: true, block_allowed: false };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut special = false;
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) = (false, false, false, false);
    let (mut break_space, mut space_break, mut previous_space, mut previous_break) = (false, false, false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = chars.get(i + 1).is_none_or(|&n| n == ' ' || n == '\t' || is_break(n));
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) || (c == '?' || c == ':' || c == '-') && followed_by_whitespace {
                block_indicators = true;
            }
        } else if c == ':' && followed_by_whitespace || c == '#' && preceded_by_whitespace {
            block_indicators = true;
        }
        if !printable(c) {
            special = true;
        }
        let last = i + 1 == chars.len();
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            previous_break = true;
            previous_space = false;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c);
    }
    let line_breaks = chars.iter().any(|&c| is_break(c));
    let mut plain = !(leading_space || leading_break || trailing_space || trailing_break || line_breaks);
    let mut single = true;
    let mut block = !trailing_space;
    if break_space {
        plain = false;
        single = false;
    }
    if space_break || special {
        plain = false;
        single = false;
        block = false;
    }
    if block_indicators {
        plain = false;
    }
    ScalarAnalysis { plain_allowed: plain, single_quoted_allowed: single, block_allowed: block }
}

/// The float syntax of yaml.v2's and yaml.v3's resolvers (whether or not Go can parse the value): `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
pub fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction),
        Some((whole, fraction)) => digits(whole) && (fraction.is_empty() || digits(fraction)),
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)))
}

/// YAML 1.1's sexagesimal numbers (`1:20`), which yaml.v2 and yaml.v3 quote.
pub fn is_base60(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (whole, _) = s.split_once('.').unwrap_or((s, ""));
    let mut parts = whole.split(':');
    let first = parts.next().unwrap_or_default();
    let mut count = 0;
    let rest_ok = parts.all(|p| {
        count += 1;
        (1..=2).contains(&p.len()) && p.bytes().all(|c| c.is_ascii_digit()) && p.parse::<u8>().is_ok_and(|n| n < 60)
    });
    count > 0
        && rest_ok
        && first.starts_with(|c: char| c.is_ascii_digit())
        && first.bytes().all(|c| c.is_ascii_digit() || c == b'_')
}

/// A double-quoted scalar with libyaml's escapes.
pub fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if !printable(c) => {
                let code = c as u32;
                out.push_str(&match code {
                    0..=0xFF => format!("\\x{code:02X}"),
                    0x100..=0xFFFF => format!("\\u{code:04X}"),
                    _ => format!("\\U{code:08X}"),
                });
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
