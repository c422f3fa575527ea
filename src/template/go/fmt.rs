//! Go's formatting of template values, in one place: the type names (`%T`, `typeOf`, `kindOf`,
//! the types in error messages), `%v` of a value and of a float64, and `fmt.Sprintf` for `printf`
//! (and Sprig's functions that call it) with Go's quoting: a number verb applies to Go's number
//! types only (`%d` of a float64 is `%!d(float64=3)`, and Landscaper's numbers are float64), a
//! verb applies to the elements of lists and maps (`%q` of a list), and the error markers name
//! Go's types; templates print those texts, so they must be Go's.

use super::value::{Elem, GoMap, GoValue, List, Semver, MAX_VALUE_DEPTH};
use std::fmt::Write as _;
use unicode_general_category::{get_general_category, GeneralCategory as G};

/// Go's `%v` of a float64: the expressions' formatter, which Windsor's interpolation uses too.
pub use crate::expr::go_float;

/// The formatting directive being applied: Go's `fmt` flags.
#[derive(Clone, Copy, Default)]
struct Spec {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
    /// How deep inside the printed value the element being printed is.
    depth: usize,
    /// Printing stops once the text is longer than this ([`within`]).
    cap: Option<usize>,
}

/// Text longer than the caller allowed: printing stopped there.
#[derive(Debug, PartialEq, Eq)]
pub struct TooLong;

/// The text `print` writes, or [`TooLong`] once it passes `cap` bytes: a width applies to each
/// element of a list (`%65536v`), and an argument may be printed many times (`%[1]s%[1]s…`), so a
/// short call can print far more than its arguments hold.
pub fn within(cap: usize, print: impl FnOnce(Option<usize>) -> String) -> Result<String, TooLong> {
    let text = print(Some(cap));
    if text.len() > cap {
        return Err(TooLong);
    }
    Ok(text)
}

/// Whether the text passed the cap: printing stops.
fn over(out: &str, spec: Spec) -> bool {
    spec.cap.is_some_and(|cap| out.len() > cap)
}

/// Go's name for a value's type, for messages.
pub fn go_type(value: &GoValue) -> &'static str {
    match value {
        GoValue::Nil => "nil",
        GoValue::Bool(_) => "bool",
        GoValue::Int(_) => "int",
        GoValue::Int64(_) => "int64",
        GoValue::Uint(_) => "uint64",
        GoValue::Float(_) => "float64",
        GoValue::String(_) => "string",
        GoValue::List(items) => match items.elem {
            Elem::Any => "[]interface {}",
            Elem::String => "[]string",
            Elem::Int => "[]int",
            Elem::List => "[][]interface {}",
        },
        GoValue::Map(map) if map.is_strings() => "map[string]string",
        GoValue::Map(_) => "map[string]interface {}",
        GoValue::Semver(v) if v.pointer => "*semver.Version",
        GoValue::Semver(_) => "semver.Version",
    }
}

/// Go's `fmt.Sprint` of one value (`%v`): what a template writes for it.
pub fn sprint_value(value: &GoValue) -> String {
    sprint_value_capped(value, None)
}

/// [`sprint_value`], stopping past `cap` bytes ([`within`]).
pub fn sprint_value_capped(value: &GoValue, cap: Option<usize>) -> String {
    let mut out = String::new();
    print_arg(&mut out, value, 'v', Spec { cap, ..Spec::default() });
    out
}

/// `fmt.Sprintf("%T")` of a template value, as Sprig's `typeOf` gives it.
pub fn type_of(value: &GoValue) -> &'static str {
    type_name(value)
}

/// `reflect.Value.Kind().String()` of a template value.
pub fn kind_of(value: &GoValue) -> &'static str {
    match value {
        GoValue::Nil => "invalid",
        GoValue::List(_) => "slice",
        GoValue::Map(_) => "map",
        GoValue::Semver(v) if v.pointer => "ptr",
        GoValue::Semver(_) => "struct",
        other => go_type(other),
    }
}

/// Widths and precisions are capped: `%999999999d` must not allocate a gigabyte. 65 535 is also
/// the most Rust's formatter takes as a precision (`%.65536f` panicked there).
const MAX_WIDTH: usize = (1 << 16) - 1;

/// Go's type name of a value, as `%T` and the error markers print it.
pub fn type_name(value: &GoValue) -> &'static str {
    match value {
        GoValue::Nil => "<nil>",
        other => go_type(other),
    }
}

/// `fmt.Sprintf(format, args...)`.
pub fn sprintf(format: &str, args: &[GoValue]) -> String {
    sprintf_capped(format, args, None)
}

/// [`sprintf`], stopping past `cap` bytes ([`within`]).
pub fn sprintf_capped(format: &str, args: &[GoValue], cap: Option<usize>) -> String {
    let mut out = String::new();
    let bytes = format.as_bytes();
    let mut i = 0;
    let mut next = 0usize;
    let mut reordered = false;
    let mut good_arg_num = true;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i] != b'%' {
            i += 1;
        }
        out.push_str(&format[start..i]);
        if i >= bytes.len() {
            break;
        }
        i += 1; // '%'
        if over(&out, Spec { cap, ..Spec::default() }) {
            break;
        }
        let mut spec = Spec { cap, ..Spec::default() };
        while i < bytes.len() {
            match bytes[i] {
                b'#' => spec.sharp = true,
                b'0' => spec.zero = !spec.minus,
                b'+' => spec.plus = true,
                b'-' => {
                    spec.minus = true;
                    spec.zero = false;
                }
                b' ' => spec.space = true,
                _ => break,
            }
            i += 1;
        }
        // Argument index, then width.
        (next, i, good_arg_num) = arg_number(format, i, next, args.len(), &mut reordered, good_arg_num);
        if i < bytes.len() && bytes[i] == b'*' {
            i += 1;
            match int_arg(args, next) {
                Some(n) => {
                    next += 1;
                    if n < 0 {
                        spec.minus = true;
                        spec.zero = false;
                    }
                    spec.width = Some(n.unsigned_abs().min(MAX_WIDTH as u64) as usize);
                }
                None => {
                    next += usize::from(next < args.len());
                    out.push_str("%!(BADWIDTH)");
                }
            }
            reordered = false;
        } else {
            let (n, after) = digits(format, i);
            if after > i {
                spec.width = Some(n.min(MAX_WIDTH));
            }
            i = after;
        }
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
            (next, i, good_arg_num) = arg_number(format, i, next, args.len(), &mut reordered, good_arg_num);
            if i < bytes.len() && bytes[i] == b'*' {
                i += 1;
                match int_arg(args, next) {
                    Some(n) if n >= 0 => {
                        next += 1;
                        spec.precision = Some((n as u64).min(MAX_WIDTH as u64) as usize);
                    }
                    _ => {
                        next += usize::from(next < args.len());
                        out.push_str("%!(BADPREC)");
                    }
                }
                reordered = false;
            } else {
                let (n, after) = digits(format, i);
                spec.precision = Some(n.min(MAX_WIDTH));
                i = after;
            }
        }
        if !reordered {
            (next, i, good_arg_num) = arg_number(format, i, next, args.len(), &mut reordered, good_arg_num);
        }
        let Some(verb) = format[i..].chars().next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += verb.len_utf8();
        match verb {
            '%' => out.push('%'),
            _ if !good_arg_num => {
                let _ = write!(out, "%!{verb}(BADINDEX)");
            }
            _ if next >= args.len() => {
                let _ = write!(out, "%!{verb}(MISSING)");
            }
            'w' => {
                let _ = write!(out, "%!w(");
                bad_arg(&mut out, &args[next]);
                out.push(')');
                next += 1;
            }
            _ => {
                // `%+v` and `%#v` are their own forms: the flag does not reach the numbers.
                let spec = if verb == 'v' { Spec { plus: false, ..spec } } else { spec };
                print_arg(&mut out, &args[next], verb, spec);
                next += 1;
            }
        }
    }
    if !reordered && next < args.len() {
        out.push_str("%!(EXTRA ");
        for (n, arg) in args[next..].iter().enumerate() {
            if n > 0 {
                out.push_str(", ");
            }
            bad_arg(&mut out, arg);
        }
        out.push(')');
    }
    out
}

/// `fmt.Sprint(args...)`: each `%v`, with a space between two operands neither of which is a
/// string; stopping past `cap` bytes ([`within`]).
pub fn sprint_capped(args: &[GoValue], cap: Option<usize>) -> String {
    let spec = Spec { cap, ..Spec::default() };
    let mut out = String::new();
    for (n, arg) in args.iter().enumerate() {
        if over(&out, spec) {
            break;
        }
        if n > 0 && !matches!(arg, GoValue::String(_)) && !matches!(args[n - 1], GoValue::String(_)) {
            out.push(' ');
        }
        print_arg(&mut out, arg, 'v', spec);
    }
    out
}

/// `fmt.Sprintln(args...)`: each `%v`, a space between any two, and a newline; stopping past
/// `cap` bytes ([`within`]).
pub fn sprintln_capped(args: &[GoValue], cap: Option<usize>) -> String {
    let spec = Spec { cap, ..Spec::default() };
    let mut out = String::new();
    for (n, arg) in args.iter().enumerate() {
        if over(&out, spec) {
            break;
        }
        if n > 0 {
            out.push(' ');
        }
        print_arg(&mut out, arg, 'v', spec);
    }
    out.push('\n');
    out
}

/// The text Go's `html`, `js` and `urlquery` escape: a single string as it is, anything else
/// as `fmt.Sprint` prints the arguments; stopping past `cap` bytes ([`within`]).
pub fn escaper_text(args: &[GoValue], cap: Option<usize>) -> String {
    match args {
        [GoValue::String(s)] => s.to_string(),
        // A nil argument is text/template's `<no value>`, a string to Sprint.
        _ => sprint_capped(
            &args
                .iter()
                .map(|arg| match arg {
                    GoValue::Nil => GoValue::String("<no value>".into()),
                    other => other.clone(),
                })
                .collect::<Vec<_>>(),
            cap,
        ),
    }
}

/// Go's `template.JSEscapeString`.
pub fn js_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            _ if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u00{:02X}", c as u32);
            }
            _ if c.is_ascii() || printable(c) => out.push(c),
            _ => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
        }
    }
    out
}

/// `type=value` (or `<nil>`) inside an error marker.
fn bad_arg(out: &mut String, arg: &GoValue) {
    if matches!(arg, GoValue::Nil) {
        out.push_str("<nil>");
        return;
    }
    out.push_str(type_name(arg));
    out.push('=');
    print_arg(out, arg, 'v', Spec::default());
}

/// Go's `[n]` argument index: the next argument's position, where parsing resumes, and whether
/// the index was good.
fn arg_number(
    format: &str,
    i: usize,
    next: usize,
    count: usize,
    reordered: &mut bool,
    good: bool,
) -> (usize, usize, bool) {
    let bytes = format.as_bytes();
    if i >= bytes.len() || bytes[i] != b'[' {
        return (next, i, good);
    }
    *reordered = true;
    let Some(close) = format[i..].find(']').map(|c| i + c) else { return (next, i, false) };
    match format[i + 1..close].parse::<usize>() {
        Ok(n) if n >= 1 && n <= count => (n - 1, close + 1, true),
        _ => (next, close + 1, false),
    }
}

fn digits(format: &str, mut i: usize) -> (usize, usize) {
    let bytes = format.as_bytes();
    let mut n = 0usize;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add(usize::from(bytes[i] - b'0'));
        i += 1;
    }
    (n, i)
}

/// A `*` width or precision: an `int` argument (Go takes only ints there).
fn int_arg(args: &[GoValue], i: usize) -> Option<i64> {
    let arg = args.get(i)?;
    match arg {
        GoValue::Int(n) => Some(*n).filter(|n| n.unsigned_abs() <= 1_000_000),
        _ => None,
    }
}

fn bad_verb(out: &mut String, verb: char, arg: &GoValue, spec: Spec) {
    let _ = write!(out, "%!{verb}(");
    match arg {
        GoValue::Nil => out.push_str("<nil>"),
        other => {
            out.push_str(type_name(other));
            out.push('=');
            print_arg(out, other, 'v', spec);
        }
    }
    out.push(')');
}

/// Prints one argument with a verb, as Go's `printArg`/`printValue` do.
fn print_arg(out: &mut String, arg: &GoValue, verb: char, spec: Spec) {
    if verb == 'T' {
        pad(out, type_name(arg), spec);
        return;
    }
    match arg {
        GoValue::Nil => match verb {
            'v' => pad(out, "<nil>", spec),
            _ => bad_verb(out, verb, arg, spec),
        },
        GoValue::Bool(b) => match verb {
            't' | 'v' => pad(out, if *b { "true" } else { "false" }, spec),
            _ => bad_verb(out, verb, arg, spec),
        },
        GoValue::Int(n) | GoValue::Int64(n) => integer(out, *n < 0, n.unsigned_abs(), true, verb, spec, arg),
        GoValue::Uint(n) => integer(out, false, *n, false, verb, spec, arg),
        GoValue::Float(f) => float(out, *f, verb, spec, arg),
        GoValue::String(s) => string(out, s, verb, spec, arg),
        GoValue::List(items) => list(out, items, go_type(arg), verb, spec),
        GoValue::Semver(version) => semver(out, version, verb, spec, arg),
        GoValue::Map(map) => {
            let map = map.read();
            if spec.sharp && verb == 'v' {
                go_syntax_map(out, &map, go_type(arg), spec);
                return;
            }
            out.push_str("map[");
            for (n, (key, item)) in map.iter().enumerate() {
                if n > 0 {
                    out.push(' ');
                }
                print_arg(out, &GoValue::String(key.clone()), verb, spec);
                out.push(':');
                element(out, item, verb, spec);
            }
            out.push(']');
        }
    }
}

/// A list of Go type `type_name` (a nil slice under `%#v` is `[]T(nil)`).
fn list(out: &mut String, items: &List, type_name: &str, verb: char, spec: Spec) {
    if spec.sharp && verb == 'v' {
        out.push_str(type_name);
        if items.nil {
            out.push_str("(nil)");
            return;
        }
        out.push('{');
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                out.push_str(", ");
            }
            go_syntax_element(out, item, spec);
        }
        out.push('}');
        return;
    }
    out.push('[');
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        element(out, item, verb, spec);
    }
    out.push(']');
}

/// A map of Go type `type_name` under `%#v`.
fn go_syntax_map(out: &mut String, map: &GoMap, type_name: &str, spec: Spec) {
    out.push_str(type_name);
    out.push('{');
    for (n, (key, item)) in map.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        quote_into(out, key, false);
        out.push(':');
        go_syntax_element(out, item, spec);
    }
    out.push('}');
}

/// A `*semver.Version`: its text for the verbs Go prints a `Stringer` with, else the struct
/// behind the pointer, field by field.
fn semver(out: &mut String, semver: &Semver, verb: char, spec: Spec, arg: &GoValue) {
    let v = &semver.version;
    let values = [
        ("major", GoValue::Uint(v.major)),
        ("minor", GoValue::Uint(v.minor)),
        ("patch", GoValue::Uint(v.patch)),
        ("pre", GoValue::String(v.pre.as_str().into())),
        ("metadata", GoValue::String(v.metadata.as_str().into())),
        ("original", GoValue::String(semver.original.clone())),
    ];
    if spec.sharp && verb == 'v' {
        out.push_str(if semver.pointer { "&semver.Version{" } else { "semver.Version{" });
        for (n, (name, value)) in values.iter().enumerate() {
            if n > 0 {
                out.push_str(", ");
            }
            out.push_str(name);
            out.push(':');
            print_arg(out, value, 'v', spec);
        }
        out.push('}');
        return;
    }
    match verb {
        'v' | 's' | 'q' | 'x' | 'X' => string(out, &v.text(), verb, spec, arg),
        _ => {
            out.push_str(if semver.pointer { "&{" } else { "{" });
            for (n, (_, value)) in values.iter().enumerate() {
                if n > 0 {
                    out.push(' ');
                }
                print_arg(out, value, verb, spec);
            }
            out.push('}');
        }
    }
}

/// Whether an element is nested too deep to print. What a template prints is measured first,
/// and refused when it nests deeper than values may ([`MAX_VALUE_DEPTH`]); a value deepened by
/// changing maps in place can reach here deeper still, and prints as `...` there rather than
/// exhaust the stack.
fn too_deep(out: &mut String, spec: Spec) -> bool {
    if spec.depth >= MAX_VALUE_DEPTH {
        out.push_str("...");
        return true;
    }
    over(out, spec)
}

/// An element of a list or map: a nil one is `<nil>` whatever the verb.
fn element(out: &mut String, item: &GoValue, verb: char, spec: Spec) {
    if too_deep(out, spec) {
        return;
    }
    let spec = Spec { depth: spec.depth + 1, ..spec };
    match item {
        GoValue::Nil => pad(out, "<nil>", spec),
        other => print_arg(out, other, verb, spec),
    }
}

/// An element of a list or map under `%#v`: a nil element is a typed nil.
fn go_syntax_element(out: &mut String, item: &GoValue, spec: Spec) {
    if too_deep(out, spec) {
        return;
    }
    let spec = Spec { depth: spec.depth + 1, ..spec };
    match item {
        GoValue::Nil => out.push_str("interface {}(nil)"),
        other => print_arg(out, other, 'v', spec),
    }
}

/// Pads `text` to the width: spaces (or zeros) on the left, or spaces on the right with `-`.
fn pad(out: &mut String, text: &str, spec: Spec) {
    let len = text.chars().count();
    let Some(width) = spec.width.filter(|w| *w > len) else {
        out.push_str(text);
        return;
    };
    let fill = width - len;
    if spec.minus {
        out.push_str(text);
        out.extend(std::iter::repeat_n(' ', fill));
    } else {
        out.extend(std::iter::repeat_n(if spec.zero { '0' } else { ' ' }, fill));
        out.push_str(text);
    }
}

/// Pads a number: zeros go after the sign (and a `0x` prefix stays in front of them).
fn pad_number(out: &mut String, sign: &str, prefix: &str, digits: &str, spec: Spec) {
    let len = sign.len() + prefix.len() + digits.chars().count();
    match spec.width.filter(|w| *w > len) {
        Some(width) if spec.zero && !spec.minus => {
            out.push_str(sign);
            out.push_str(prefix);
            out.extend(std::iter::repeat_n('0', width - len));
            out.push_str(digits);
        }
        _ => pad(out, &format!("{sign}{prefix}{digits}"), Spec { zero: false, ..spec }),
    }
}

fn sign_of(negative: bool, spec: Spec) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn integer(out: &mut String, negative: bool, magnitude: u64, signed: bool, verb: char, spec: Spec, arg: &GoValue) {
    let (base, prefix, upper) = match verb {
        // Go's `%#v` of an unsigned integer is hexadecimal.
        'v' if spec.sharp && !signed => (16, "0x", false),
        'd' | 'v' => (10, "", false),
        'b' => (2, if spec.sharp { "0b" } else { "" }, false),
        'o' => (8, if spec.sharp { "0" } else { "" }, false),
        'O' => (8, "0o", false),
        'x' => (16, if spec.sharp { "0x" } else { "" }, false),
        'X' => (16, if spec.sharp { "0X" } else { "" }, true),
        'c' => {
            let c = u32::try_from(magnitude).ok().filter(|_| !negative).and_then(char::from_u32).unwrap_or('\u{FFFD}');
            pad(out, &c.to_string(), spec);
            return;
        }
        'q' => {
            // Not a rune (negative, a surrogate, past U+10FFFF): Go quotes U+FFFD.
            let c = u32::try_from(magnitude).ok().filter(|_| !negative).and_then(char::from_u32).unwrap_or('\u{FFFD}');
            pad(out, &quote_rune(c), spec);
            return;
        }
        'U' => {
            let value = if negative { magnitude.wrapping_neg() } else { magnitude };
            let mut text = format!("U+{value:04X}");
            if spec.sharp {
                if let Some(c) = u32::try_from(value).ok().and_then(char::from_u32).filter(|c| printable(*c)) {
                    let _ = write!(text, " '{c}'");
                }
            }
            pad(out, &text, spec);
            return;
        }
        _ => {
            bad_verb(out, verb, arg, spec);
            return;
        }
    };
    let _ = signed;
    let mut digits = match base {
        2 => format!("{magnitude:b}"),
        8 => format!("{magnitude:o}"),
        16 if upper => format!("{magnitude:X}"),
        16 => format!("{magnitude:x}"),
        _ => magnitude.to_string(),
    };
    if let Some(precision) = spec.precision {
        if precision == 0 && magnitude == 0 {
            digits.clear();
        } else if digits.len() < precision {
            digits = format!("{}{digits}", "0".repeat(precision - digits.len()));
        }
        // A precision turns off zero padding.
        pad_number(out, sign_of(negative, spec), prefix, &digits, Spec { zero: false, ..spec });
        return;
    }
    // `%#o` of 0 is `0`: the prefix is the leading zero.
    let prefix = if verb == 'o' && digits.starts_with('0') { "" } else { prefix };
    pad_number(out, sign_of(negative, spec), prefix, &digits, spec);
}

fn float(out: &mut String, f: f64, verb: char, spec: Spec, arg: &GoValue) {
    if f.is_nan() || f.is_infinite() {
        if !matches!(verb, 'v' | 'b' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'x' | 'X') {
            bad_verb(out, verb, arg, spec);
            return;
        }
        let text = if f.is_nan() {
            if spec.plus {
                "+NaN"
            } else if spec.space {
                " NaN"
            } else {
                "NaN"
            }
        } else if f > 0.0 {
            if spec.plus {
                "+Inf"
            } else if spec.space {
                " Inf"
            } else {
                "+Inf"
            }
        } else {
            "-Inf"
        };
        let text = if f.is_infinite() && f > 0.0 && !spec.plus && !spec.space { "+Inf" } else { text };
        pad(out, text, Spec { zero: false, ..spec });
        return;
    }
    let negative = f.is_sign_negative();
    let magnitude = f.abs();
    // Rust's formatter takes fewer digits than a precision may ask for (and panics past them);
    // a float64's decimal expansion ends within FLOAT_DIGITS, so the rest are zeros.
    let precision = spec.precision.map(|p| (p.min(FLOAT_DIGITS), p.saturating_sub(FLOAT_DIGITS)));
    let zeros = |n: usize| "0".repeat(n);
    let digits = match verb {
        'v' | 'g' | 'G' => match precision {
            None => go_float(magnitude),
            Some((p, rest)) => {
                let digits = g_with_precision(magnitude, p.max(1), spec.sharp);
                // With `#` the trailing zeros stay, and the form is fixed-point that far out.
                if spec.sharp && !digits.contains('e') {
                    digits + &zeros(rest)
                } else {
                    digits
                }
            }
        },
        'e' | 'E' => {
            let (p, rest) = precision.unwrap_or((6, 0));
            let digits = exponent(magnitude, p);
            match digits.split_once('e') {
                Some((mantissa, exp)) if rest > 0 => format!("{mantissa}{}e{exp}", zeros(rest)),
                _ => digits,
            }
        }
        'f' | 'F' => {
            let (p, rest) = precision.unwrap_or((6, 0));
            format!("{magnitude:.p$}{}", zeros(rest))
        }
        'b' => binary_exponent(magnitude),
        'x' | 'X' => hex_float(magnitude),
        _ => {
            bad_verb(out, verb, arg, spec);
            return;
        }
    };
    let digits = if matches!(verb, 'E' | 'G' | 'X') { digits.to_uppercase() } else { digits };
    // Go prints `%v` of -0.0 as `-0`.
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest.to_string()),
        None => (sign_of(negative, spec), digits),
    };
    pad_number(out, sign, "", &digits, spec);
}

/// Digits Rust's formatter is asked for at most: a float64's exact decimal expansion has at most
/// 767 significant digits and 1 074 after the point.
const FLOAT_DIGITS: usize = 1_100;

/// `%.Ne`: Go's mantissa and a two-digit (at least) signed exponent.
fn exponent(f: f64, precision: usize) -> String {
    let text = format!("{f:.precision$e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// `%.Ng`: N significant digits, exponent form when the exponent is below -4 or at least N.
fn g_with_precision(f: f64, precision: usize, sharp: bool) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let text = format!("{f:.*e}", precision - 1);
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if sharp || !s.contains('.') {
            s.to_string()
        } else {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        format!("{}e{}{:02}", trim(mantissa), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{f:.decimals$}"))
    }
}

/// `%b` of a float: `mantissa p exponent`, as strconv's 'b' format.
fn binary_exponent(f: f64) -> String {
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mantissa = bits & ((1 << 52) - 1);
    let exp = if exp == 0 {
        -1074
    } else {
        mantissa |= 1 << 52;
        exp - 1075
    };
    format!("{mantissa}p{}{}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// `%x` of a float: `0x1.8p+01`, as strconv's 'x' format with the shortest mantissa.
fn hex_float(f: f64) -> String {
    if f == 0.0 {
        return "0x0p+00".into();
    }
    let bits = f.to_bits();
    let mut exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mantissa = bits & ((1 << 52) - 1);
    if exp == 0 {
        // Subnormal: normalize.
        exp = -1022;
        while mantissa & (1 << 52) == 0 {
            mantissa <<= 1;
            exp -= 1;
        }
        mantissa &= (1 << 52) - 1;
    } else {
        exp -= 1023;
    }
    let mut digits = format!("{mantissa:013x}");
    while digits.ends_with('0') {
        digits.pop();
    }
    let fraction = if digits.is_empty() { String::new() } else { format!(".{digits}") };
    format!("0x1{fraction}p{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn string(out: &mut String, s: &str, verb: char, spec: Spec, arg: &GoValue) {
    let truncated = |s: &str| -> String {
        match spec.precision {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_string(),
        }
    };
    match verb {
        'v' if spec.sharp => {
            let mut quoted = String::new();
            quote_into(&mut quoted, s, false);
            pad(out, &quoted, spec);
        }
        's' | 'v' => pad(out, &truncated(s), spec),
        'q' => {
            let text = truncated(s);
            let mut quoted = String::new();
            if spec.sharp && !text.contains('`') && text.chars().all(|c| c == '\t' || (printable(c) && c != '\u{FEFF}'))
            {
                quoted = format!("`{text}`");
            } else {
                quote_into(&mut quoted, &text, spec.plus);
            }
            pad(out, &quoted, spec);
        }
        'x' | 'X' => {
            let bytes = match spec.precision {
                Some(p) => &s.as_bytes()[..p.min(s.len())],
                None => s.as_bytes(),
            };
            let mut text = String::new();
            for (n, byte) in bytes.iter().enumerate() {
                if spec.space && n > 0 {
                    text.push(' ');
                }
                if spec.sharp && (spec.space || n == 0) {
                    text.push_str(if verb == 'x' { "0x" } else { "0X" });
                }
                let _ = if verb == 'x' { write!(text, "{byte:02x}") } else { write!(text, "{byte:02X}") };
            }
            pad(out, &text, Spec { zero: false, ..spec });
        }
        _ => bad_verb(out, verb, arg, spec),
    }
}

/// Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space.
fn printable(c: char) -> bool {
    match c {
        ' '..='~' => return true,
        // Latin-1 without its controls, no-break space and soft hyphen: no table needed.
        '\u{0}'..='\u{a0}' | '\u{ad}' => return false,
        '\u{a1}'..='\u{ff}' => return true,
        _ => {}
    }
    !matches!(
        get_general_category(c),
        G::SpaceSeparator
            | G::LineSeparator
            | G::ParagraphSeparator
            | G::Control
            | G::Format
            | G::Surrogate
            | G::PrivateUse
            | G::Unassigned
    )
}

/// `strconv.Quote` (or `QuoteToASCII` with `ascii`).
fn quote_into(out: &mut String, s: &str, ascii: bool) {
    out.push('"');
    for c in s.chars() {
        escape_into(out, c, '"', ascii);
    }
    out.push('"');
}

fn quote_rune(c: char) -> String {
    let mut out = String::from("'");
    escape_into(&mut out, c, '\'', false);
    out.push('\'');
    out
}

fn escape_into(out: &mut String, c: char, quote: char, ascii: bool) {
    match c {
        _ if c == quote || c == '\\' => {
            out.push('\\');
            out.push(c);
        }
        // The common case first: printable ASCII (quoting megabytes must stay fast).
        ' '..='~' => out.push(c),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        _ if !c.is_ascii() && !ascii && printable(c) => out.push(c),
        _ => {
            let code = c as u32;
            let _ = match code {
                0..0x80 => write!(out, "\\x{code:02x}"),
                0x80..0x10000 => write!(out, "\\u{code:04x}"),
                _ => write!(out, "\\U{code:08x}"),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::go::value::{list, map, string as s, GoMap};
    use std::sync::Arc;

    /// Expectations from Go 1.19's fmt.Sprintf with the same values.
    #[test]
    fn huge_widths_and_precisions_are_capped() {
        for format in ["%.65536f", "%.70000e", "%.65536g", "%100000d", "%.65536s"] {
            let text = sprintf(format, &[GoValue::Float(1.0)]);
            assert!(text.len() <= MAX_WIDTH + 16, "{format}: {}", text.len());
        }
        assert_eq!(sprintf("%.65536f", &[GoValue::Float(1.0)]).len(), 2 + MAX_WIDTH);
    }

    #[test]
    fn as_go_prints() {
        let int = GoValue::Int;
        let float = GoValue::Float;
        let mut m = GoMap::new();
        m.insert(Arc::from("k"), s("v"));
        let m = map(m);
        let mut nested = GoMap::new();
        nested.insert(Arc::from("a"), list(vec![float(1.5), GoValue::Nil]));
        for (format, args, expected) in [
            ("%d", vec![float(3.0)], "%!d(float64=3)"),
            ("%x", vec![float(1.5)], "0x1.8p+00"),
            ("%.3f", vec![int(2)], "%!f(int=002)"),
            ("%8.2f", vec![int(2)], "%!f(int=      02)"),
            ("%q", vec![list(vec![s("a"), s("b")])], r#"["a" "b"]"#),
            ("%s", vec![list(vec![s("a"), int(1)])], "[a %!s(int=1)]"),
            ("%s|%#v", vec![m.clone(), m], r#"map[k:v]|map[string]interface {}{"k":"v"}"#),
            ("%f", vec![s("abc")], "%!f(string=abc)"),
            ("%d", vec![int(1), s("x")], "1%!(EXTRA string=x)"),
            ("%q", vec![int(-1)], "'\u{FFFD}'"),
            ("%q", vec![s("a\"b\u{ad}")], r#""a\"b\u00ad""#),
            ("%#v %#v %#v", vec![s("a"), float(1.0), GoValue::Nil], r#""a" 1 <nil>"#),
            (
                "%5d|%-5s|%05.1f|%+d|%x|%X|%o|%b",
                vec![int(42), s("ab"), float(3.14158), int(3), int(255), s("hi"), int(8), int(5)],
                "   42|ab   |003.1|+3|ff|6869|10|101",
            ),
            ("%T %T %T", vec![int(1), list(vec![]), GoValue::Nil], "int []interface {} <nil>"),
            ("%d %s", vec![int(1)], "1 %!s(MISSING)"),
            ("%e|%g|%.3g|%v", vec![float(1e6); 4], "1.000000e+06|1e+06|1e+06|1e+06"),
            ("%c|%U|%#U", vec![int(65), int(0x1F600), int(65)], "A|U+1F600|U+0041 'A'"),
            ("%!", vec![], "%!!(MISSING)"),
            ("%", vec![], "%!(NOVERB)"),
            ("%#v", vec![list(vec![int(1), s("a"), GoValue::Nil])], r#"[]interface {}{1, "a", interface {}(nil)}"#),
            ("%x %X % x %#x", vec![s("hi"), list(vec![int(10), int(11)]), s("hi"), s("hi")], "6869 [A B] 68 69 0x6869"),
            (
                "%6.2f|%-8.3e|%g|%g|%G",
                vec![float(-3.14158), float(1234.5), float(0.00001), float(123456789.0), float(1e-7)],
                " -3.14|1.234e+03|1e-05|1.23456789e+08|1E-07",
            ),
            ("%t %v %s", vec![GoValue::Bool(true), map(nested), GoValue::Nil], "true map[a:[1.5 <nil>]] %!s(<nil>)"),
            ("%[2]d %[1]d %d", vec![int(1), int(2)], "2 1 2"),
            ("%*d|%-*d|%.*f", vec![int(5), int(1), int(4), int(2), int(2), float(3.14158)], "    1|2   |3.14"),
            ("%05s|%.2s|%5.1q", vec![s("ab"), s("héllo"), s("héllo")], r#"000ab|hé|  "h""#),
            (
                "%b %o %O %#o %#b",
                vec![float(1.0), int(8), int(8), int(8), int(5)],
                "4503599627370496p-52 10 0o10 010 0b101",
            ),
            ("%v %d", vec![GoValue::Uint(u64::MAX), int(-5)], "18446744073709551615 -5"),
            ("%q %c %q", vec![int(0x1F600), int(0x110000), int(0x110000)], "'😀' \u{FFFD} '\u{FFFD}'"),
            ("%+v|%3c", vec![list(vec![float(1.5), int(2)]), list(vec![int(97), GoValue::Nil])], "[1.5 2]|[  a <nil>]"),
        ] {
            assert_eq!(sprintf(format, &args), expected, "{format}");
        }
    }
}
