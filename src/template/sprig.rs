//! Sprig's text functions (Masterminds/sprig v3 `TxtFuncMap`), the library KOTS and Landscaper
//! put under their Go templates, with Sprig's semantics: its argument order (`"x" | trimSuffix
//! "y"`), its lenient numbers (`cast.ToInt64`: strings parse, nil is 0), `%v` printing through
//! [`go::fmt::sprint_value`], and Go's error texts where a Sprig function panics (`error calling first:
//! Cannot find first on type string`).
//!
//! Only what gives the same result on every run and machine is computed. Functions that read the
//! clock, randomness, the environment or the network are registered but fail, naming themselves
//! and saying why ([`UNAVAILABLE`]), so a template using them stops instead of differing per run.
//!
//! `set`, `unset`, `merge` and `mergeOverwrite` change the map they are given, as in Go; results
//! carry the Go type Sprig gives them (`int64`, `[]string`, a `*semver.Version`). `keys` and
//! `values` come in key order (Go's are random).

mod collections;
mod convert;
mod numeric;
pub(crate) mod regex;
mod semver;
pub mod strings;
pub mod url;

use super::go::fmt::{kind_of, type_of};
use super::go::{self, define, Arity, FuncMap, GoValue, TemplateError};
use crate::limits::MAX_DEPTH;
use base64::Engine as _;
pub use convert::{check_size, MAX_RESULT_BYTES};
use convert::{deep_equal, empty};
use sha2::Digest as _;
use std::fmt::Write as _;

/// The functions that would make a render depend on the clock, randomness, the machine or the
/// network: registered so that a template using one fails with a reason instead of "function
/// not defined".
pub const UNAVAILABLE: &[&str] = &[
    "now",
    "date",
    "dateInZone",
    "date_in_zone",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "must_date_modify",
    "htmlDate",
    "htmlDateInZone",
    "ago",
    "toDate",
    "mustToDate",
    "unixEpoch",
    "durationRound",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randBytes",
    "randInt",
    "shuffle",
    "uuidv4",
    "env",
    "expandenv",
    "getHostByName",
    "genCA",
    "genCAWithKey",
    "genPrivateKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "buildCustomCert",
    "derivePassword",
    "encryptAES",
    "decryptAES",
    "bcrypt",
    "htpasswd",
];

/// The error an unavailable function returns.
pub fn unavailable(name: &str) -> TemplateError {
    go::fail(
        name,
        format!(
            "{name} is not available: its result depends on the clock, randomness, the machine or the network, and a \
             render must give the same output every time; compute the value beforehand and pass it in as a value"
        ),
    )
}

/// The hermetic Sprig functions, and the others as failures.
pub fn functions() -> FuncMap {
    let mut funcs = FuncMap::new();
    for &name in UNAVAILABLE {
        define(&mut funcs, name, Arity::AtLeast(0), |args| Err(unavailable(args.name())));
    }
    strings::register(&mut funcs);
    collections::register(&mut funcs);
    numeric::register(&mut funcs);
    regex::register(&mut funcs);
    semver::register(&mut funcs);
    url::register(&mut funcs);
    register(&mut funcs);
    funcs
}

use Arity::{AtLeast, Exact};

fn register(funcs: &mut FuncMap) {
    define(funcs, "hello", Exact(0), |_| Ok(go::string("Hello!")));
    // Defaults and flow control.
    define(funcs, "default", AtLeast(1), |args| {
        let given = args.rest(1);
        Ok(match given.first() {
            Some(value) if !empty(value) => value.clone(),
            _ => args.any(0).clone(),
        })
    });
    define(funcs, "empty", Exact(1), |args| Ok(GoValue::Bool(empty(args.any(0)))));
    define(funcs, "coalesce", AtLeast(0), |args| {
        Ok(args.rest(0).iter().find(|value| !empty(value)).cloned().unwrap_or(GoValue::Nil))
    });
    define(funcs, "all", AtLeast(0), |args| Ok(GoValue::Bool(args.rest(0).iter().all(|value| !empty(value)))));
    define(funcs, "any", AtLeast(0), |args| Ok(GoValue::Bool(args.rest(0).iter().any(|value| !empty(value)))));
    define(funcs, "ternary", Exact(3), |args| {
        Ok(if args.bool(2)? { args.any(0).clone() } else { args.any(1).clone() })
    });
    define(funcs, "fail", Exact(1), |args| Err(go::fail(args.name(), args.string(0)?)));
    // A copy is a new map: changing it must not change the original (Go's copystructure).
    define(funcs, "deepCopy", Exact(1), |args| match args.any(0) {
        GoValue::Nil => Err(go::fail(args.name(), "reflect: call of reflect.Value.Type on zero Value")),
        value => copy_deep(args, value, 0, &mut convert::Meter::new(args)),
    });
    define(funcs, "mustDeepCopy", Exact(1), |args| copy_deep(args, args.any(0), 0, &mut convert::Meter::new(args)));
    // JSON.
    define(funcs, "fromJson", Exact(1), |args| Ok(from_json(args.string(0)?).unwrap_or(GoValue::Nil)));
    define(funcs, "mustFromJson", Exact(1), |args| from_json(args.string(0)?).map_err(|e| go::fail(args.name(), e)));
    for (name, style) in [("toJson", Json::Compact), ("toPrettyJson", Json::Pretty), ("toRawJson", Json::Raw)] {
        let body: go::Body = match style {
            Json::Compact => |args| Ok(go::string(to_json(args.any(0), Json::Compact).unwrap_or_default())),
            Json::Pretty => |args| Ok(go::string(to_json(args.any(0), Json::Pretty).unwrap_or_default())),
            // Sprig's toRawJson panics where the others return "".
            Json::Raw => |args| to_json(args.any(0), Json::Raw).map(go::string).map_err(|e| go::fail(args.name(), e)),
        };
        define(funcs, name, Exact(1).writes(go::args::ESCAPES), body);
    }
    define(funcs, "mustToJson", Exact(1).writes(go::args::ESCAPES), |args| {
        to_json(args.any(0), Json::Compact).map(go::string).map_err(|e| go::fail(args.name(), e))
    });
    define(funcs, "mustToPrettyJson", Exact(1).writes(go::args::ESCAPES), |args| {
        to_json(args.any(0), Json::Pretty).map(go::string).map_err(|e| go::fail(args.name(), e))
    });
    define(funcs, "mustToRawJson", Exact(1).writes(go::args::ESCAPES), |args| {
        to_json(args.any(0), Json::Raw).map(go::string).map_err(|e| go::fail(args.name(), e))
    });
    // Reflection.
    define(funcs, "typeOf", Exact(1), |args| Ok(go::string(type_of(args.any(0)))));
    define(funcs, "typeIs", Exact(2), |args| Ok(GoValue::Bool(args.string(0)? == type_of(args.any(1)))));
    define(funcs, "typeIsLike", Exact(2), |args| {
        let (target, actual) = (args.string(0)?, type_of(args.any(1)));
        Ok(GoValue::Bool(target == actual || actual.strip_prefix('*') == Some(target)))
    });
    define(funcs, "kindOf", Exact(1), |args| Ok(go::string(kind_of(args.any(0)))));
    define(funcs, "kindIs", Exact(2), |args| Ok(GoValue::Bool(args.string(0)? == kind_of(args.any(1)))));
    define(funcs, "deepEqual", Exact(2), |args| {
        Ok(GoValue::Bool(deep_equal(args.any(0), args.any(1), &mut convert::Meter::new(args))?))
    });
    // Encodings.
    define(funcs, "b64enc", Exact(1).writes(go::args::TEXT), |args| {
        Ok(go::string(base64::engine::general_purpose::STANDARD.encode(args.string(0)?)))
    });
    define(funcs, "b64dec", Exact(1), |args| Ok(go::string(b64dec(args.string(0)?))));
    define(funcs, "b32enc", Exact(1).writes(go::args::TEXT), |args| {
        Ok(go::string(data_encoding::BASE32.encode(args.string(0)?.as_bytes())))
    });
    define(funcs, "b32dec", Exact(1), |args| {
        let text = args.string(0)?.replace(['\r', '\n'], "");
        Ok(go::string(match data_encoding::BASE32.decode(text.as_bytes()) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(err) => format!("illegal base32 data at input byte {}", err.position),
        }))
    });
    // Hashes.
    define(funcs, "sha1sum", Exact(1), |args| Ok(go::string(hex(&sha1::Sha1::digest(args.string(0)?)))));
    define(funcs, "sha256sum", Exact(1), |args| Ok(go::string(hex(&sha2::Sha256::digest(args.string(0)?)))));
    define(funcs, "sha512sum", Exact(1), |args| Ok(go::string(hex(&sha2::Sha512::digest(args.string(0)?)))));
    define(funcs, "adler32sum", Exact(1), |args| Ok(go::string(adler32(args.string(0)?.as_bytes()).to_string())));
    // Paths (Go's `path`, and `filepath` as on Linux).
    for (name, os) in
        [("base", "osBase"), ("dir", "osDir"), ("clean", "osClean"), ("ext", "osExt"), ("isAbs", "osIsAbs")]
    {
        let body: go::Body = match name {
            "base" => |args| Ok(go::string(path_base(args.string(0)?))),
            "dir" => |args| Ok(go::string(path_dir(args.string(0)?))),
            "clean" => |args| Ok(go::string(path_clean(args.string(0)?))),
            "ext" => |args| Ok(go::string(path_ext(args.string(0)?))),
            _ => |args| Ok(GoValue::Bool(args.string(0)?.starts_with('/'))),
        };
        define(funcs, name, Exact(1), body);
        define(funcs, os, Exact(1), body);
    }
}

/// `value` with every map and list in it newly allocated, each copy charged as it is made (a value
/// of shared parts copies each part as often as it is reached, as Go's copystructure does).
fn copy_deep(
    args: &go::Args<'_>,
    value: &GoValue,
    depth: usize,
    meter: &mut convert::Meter<'_>,
) -> Result<GoValue, TemplateError> {
    if depth > crate::limits::MAX_DEPTH {
        let limit = crate::limits::MAX_DEPTH;
        return Err(go::fail(args.name(), format!("the value nests more than {limit} levels deep")));
    }
    Ok(match value {
        GoValue::Map(map) => {
            let entries: Vec<(std::sync::Arc<str>, GoValue)> =
                map.read().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            meter.build(entries.iter().map(|(k, _)| go::value::entry_bytes(k)).sum())?;
            let mut copy = go::GoMap::new();
            for (key, item) in entries {
                copy.insert(key, copy_deep(args, &item, depth + 1, meter)?);
            }
            GoValue::Map(if map.is_strings() { go::MapRef::strings(copy) } else { go::MapRef::new(copy) })
        }
        GoValue::List(items) => {
            meter.build(go::value::list_bytes(items.len()))?;
            let mut copy = Vec::with_capacity(items.len());
            for item in items.iter() {
                copy.push(copy_deep(args, item, depth + 1, meter)?);
            }
            GoValue::List(items.with_items(copy))
        }
        other => other.clone(),
    })
}

/// Go's base64 decoding as Sprig reports it: the error text in place of the result. Go skips
/// line breaks in the input.
fn b64dec(text: &str) -> String {
    let text = text.replace(['\r', '\n'], "");
    match base64::engine::general_purpose::STANDARD.decode(&text) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) => {
            let at = match err {
                base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => at,
                base64::DecodeError::InvalidLength(len) => len - len % 4,
                base64::DecodeError::InvalidPadding => text.find('=').unwrap_or(0),
            };
            format!("illegal base64 data at input byte {at}")
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// Adler-32 (RFC 1950), as Go's `hash/adler32`.
fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before the 32-bit sums must be reduced.
    for chunk in bytes.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// The flavours of Go's JSON encoding Sprig offers.
#[derive(Clone, Copy, PartialEq)]
enum Json {
    /// `json.Marshal`: compact, `<>&` escaped.
    Compact,
    /// `json.MarshalIndent(v, "", "  ")`.
    Pretty,
    /// An encoder without HTML escaping.
    Raw,
}

/// Go's JSON encoding of a template value: map keys sorted, floats as Go spells them,
/// `<`, `>`, `&` escaped unless raw.
fn to_json(value: &GoValue, style: Json) -> Result<String, String> {
    let mut out = String::new();
    write_json(&mut out, value, style, 0)?;
    Ok(out)
}

fn write_json(out: &mut String, value: &GoValue, style: Json, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("json: the value nests more than {MAX_DEPTH} levels deep"));
    }
    let newline = |out: &mut String, depth: usize| {
        if style == Json::Pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        }
    };
    match value {
        GoValue::Nil => out.push_str("null"),
        GoValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        GoValue::Int(n) | GoValue::Int64(n) => out.push_str(&n.to_string()),
        GoValue::Uint(n) => out.push_str(&n.to_string()),
        // Its MarshalJSON: the text.
        GoValue::Semver(v) => json_string(out, &v.version.text(), style != Json::Raw),
        GoValue::Float(f) => out.push_str(&json_float(*f)?),
        GoValue::String(s) => json_string(out, s, style != Json::Raw),
        GoValue::List(items) if items.nil => out.push_str("null"),
        GoValue::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json(out, item, style, depth + 1)?;
            }
            if !items.is_empty() {
                newline(out, depth);
            }
            out.push(']');
        }
        GoValue::Map(map) => {
            let map = map.read();
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                json_string(out, key, style != Json::Raw);
                out.push(':');
                if style == Json::Pretty {
                    out.push(' ');
                }
                write_json(out, item, style, depth + 1)?;
            }
            if !map.is_empty() {
                newline(out, depth);
            }
            out.push('}');
        }
    }
    Ok(())
}

/// Go's JSON number for a float64: plain digits, exponent form below 1e-6 and from 1e21 on.
fn json_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!("json: unsupported value: {}", go::go_float(f)));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{f:e}");
        let Some((mantissa, exponent)) = text.split_once('e') else { return Ok(text) };
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        return Ok(format!("{mantissa}e{sign}{}", exponent.abs()));
    }
    Ok(format!("{f}"))
}

fn json_string(out: &mut String, s: &str, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `json.Unmarshal` into `interface{}`: every number is a float64.
fn from_json(text: &str) -> Result<GoValue, String> {
    // serde_json is built without its recursion limit; refuse deep nesting before parsing.
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for c in text.bytes() {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("the JSON nests more than {MAX_DEPTH} levels deep"));
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(json_to_go(&value))
}

fn json_to_go(value: &serde_json::Value) -> GoValue {
    match value {
        serde_json::Value::Number(n) => GoValue::Float(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::Array(items) => go::list(items.iter().map(json_to_go).collect()),
        serde_json::Value::Object(map) => {
            go::map(map.iter().map(|(k, v)| (k.as_str().into(), json_to_go(v))).collect())
        }
        other => go::to_go(other),
    }
}

/// Go's `path.Clean`: the shortest equivalent slash path.
pub fn path_clean(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`.
fn path_base(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Dir`.
fn path_dir(path: &str) -> String {
    let dir = match path.rfind('/') {
        Some(at) => &path[..=at],
        None => "",
    };
    path_clean(dir)
}

/// Go's `path.Ext`.
fn path_ext(path: &str) -> String {
    for (at, c) in path.char_indices().rev() {
        match c {
            '/' => break,
            '.' => return path[at..].to_string(),
            _ => {}
        }
    }
    String::new()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::limits::Budget;

    /// Runs `source` with Sprig's functions over `data`.
    pub fn run_with(source: &str, data: &GoValue) -> Result<String, String> {
        let budget = Budget::default();
        Ok(go::compile(source, ("{{", "}}"), &functions().into())?.execute(data, &budget)?)
    }

    pub fn run(source: &str) -> Result<String, String> {
        run_with(source, &GoValue::Nil)
    }

    /// Asserts each template gives its expected output.
    pub fn expect(cases: &[(&str, &str)]) {
        for (source, expected) in cases {
            assert_eq!(run(source).as_deref(), Ok(*expected), "{source}");
        }
    }

    /// Asserts each template fails with a message containing the given text.
    pub fn expect_err(cases: &[(&str, &str)]) {
        for (source, expected) in cases {
            let err = run(source).err().unwrap_or_default();
            assert!(err.contains(expected), "{source}: {err}");
        }
    }

    #[test]
    fn defaults() {
        // defaults_test.go: TestDefault, TestEmpty, TestCoalesce, TestAll, TestAny, TestTernary.
        expect(&[
            (r#"{{ "" | default "foo" }}"#, "foo"),
            (r#"{{ "bar" | default "foo" }}"#, "bar"),
            (r#"{{ default "foo" .Nothing }}"#, "foo"),
            (r#"{{ 0 | default 5 }}"#, "5"),
            (r#"{{ list | default "x" }}"#, "x"),
            (r#"{{ dict | default "x" }}"#, "x"),
            (r#"{{ false | default "x" }}"#, "x"),
            (r#"{{ default "x" }}"#, "x"),
            (r#"{{ if empty "" }}1{{ end }}{{ if empty 0 }}2{{ end }}{{ if empty "x" }}3{{ end }}"#, "12"),
            (r#"{{ if empty .Nothing }}1{{ end }}{{ if empty (dict "a" 1) }}2{{ end }}"#, "1"),
            (r#"{{ coalesce 1 }}{{ coalesce "" 0 nil 2 }}{{ coalesce "" 0 nil }}"#, "12<no value>"),
            (r#"{{ all 1 "x" true }}{{ all 1 "" }}{{ any "" 0 "a" }}{{ any "" 0 }}"#, "truefalsetruefalse"),
            (r#"{{ true | ternary "foo" "bar" }}{{ ternary "foo" "bar" false }}"#, "foobar"),
            (r#"{{ hello }}"#, "Hello!"),
        ]);
        expect_err(&[(r#"{{ fail "boom" }}"#, "error calling fail: boom")]);
    }

    #[test]
    fn nil_slices() {
        // Go's output (tests/gotemplate/runner.go): Sprig's rest, initial and concat of empty
        // lists and regexFindAll/regexSplit without a part are nil slices: `[]` printed, `null`
        // in JSON, not deeply equal to an empty list.
        expect(&[
            (r#"{{ list | rest }} {{ list | rest | toJson }} {{ list | initial | toJson }}"#, "[] null null"),
            (
                r#"{{ concat | toJson }} {{ concat list list | toJson }} {{ concat list (list 1) | toJson }}"#,
                "null null [1]",
            ),
            (r#"{{ regexFindAll "x" "abc" -1 | toJson }} {{ regexSplit "a" "banana" 0 | toJson }}"#, "null null"),
            (r#"{{ dict "a" (list | mustRest) | toPrettyJson }}"#, "{\n  \"a\": null\n}"),
            (r#"{{ deepEqual (list | rest) list }} {{ deepEqual (list | rest) (concat) }}"#, "false true"),
            (r#"{{ len (list | rest) }} {{ if list | rest }}x{{ else }}empty{{ end }}"#, "0 empty"),
            // Go 1.19's eq: a nil slice equals nil and another nil slice, and no other slice.
            (
                r#"{{ eq .Nothing (rest (list)) }} {{ eq (until 3) (initial (list)) }} {{ eq (concat) (rest (list)) }}"#,
                "true false true",
            ),
            (r#"{{ ne (rest (list)) .Nothing }} {{ eq 1 2 1 }} {{ eq .Nothing "a" }}"#, "false true false"),
        ]);
    }

    #[test]
    fn json() {
        // defaults_test.go: TestToJson, TestToPrettyJson, TestToRawJson, TestFromJson.
        expect(&[
            (
                r#"{{ dict "Top" (dict "bool" true "string" "test" "number" 42) | toJson }}"#,
                r#"{"Top":{"bool":true,"number":42,"string":"test"}}"#,
            ),
            (
                r#"{{ dict "Top" (dict "bool" true "list" (list 1 2)) | toPrettyJson }}"#,
                "{\n  \"Top\": {\n    \"bool\": true,\n    \"list\": [\n      1,\n      2\n    ]\n  }\n}",
            ),
            (r#"{{ dict "html" "<HEAD>" "a&b" 1.5 | toRawJson }}"#, r#"{"a&b":1.5,"html":"<HEAD>"}"#),
            (r#"{{ "<a>" | toJson }}"#, r#""\u003ca\u003e""#),
            (r#"{{ list 1e21 0.0000001 100000.0 | toJson }}"#, "[1e+21,1e-7,100000]"),
            (r#"{{ dict | toPrettyJson }}{{ list | toJson }}{{ .Nothing | toJson }}"#, "{}[]null"),
            (
                r#"{{ $v := fromJson "{\"foo\": 55, \"b\": [1, \"x\"]}" }}{{ $v.foo }} {{ $v.b }} {{ typeOf $v.foo }}"#,
                "55 [1 x] float64",
            ),
            (r#"{{ fromJson "{" }}"#, "<no value>"),
        ]);
        expect_err(&[(r#"{{ mustFromJson "{" }}"#, "error calling mustFromJson: EOF")]);
        let deep = format!("{{{{ fromJson \"{}\" }}}}", "[".repeat(10_000));
        assert_eq!(run(&deep).as_deref(), Ok("<no value>"));
    }

    #[test]
    fn reflection() {
        // reflect_test.go: TestTypeOf, TestKindOf, TestTypeIs, TestKindIs, TestDeepEqual.
        expect(&[
            (
                r#"{{ kindOf "test" }} {{ kindOf 1 }} {{ kindOf list }} {{ kindOf dict }} {{ kindOf .Nothing }}"#,
                "string int slice map invalid",
            ),
            (
                r#"{{ typeOf "test" }} {{ typeOf 1.5 }} {{ typeOf list }} {{ typeOf dict }} {{ typeOf .Nothing }}"#,
                "string float64 []interface {} map[string]interface {} <nil>",
            ),
            (
                r#"{{ kindIs "int" 123 }} {{ kindIs "map" (dict) }} {{ typeIs "string" 1 }} {{ typeIsLike "int" 1 }}"#,
                "true true false true",
            ),
            (
                r#"{{ deepEqual (list 1 2) (list 1 2) }} {{ deepEqual 1 1.0 }} {{ deepEqual (dict "a" 1) (dict "a" 1) }}"#,
                "true false true",
            ),
        ]);
    }

    #[test]
    fn encodings_and_hashes() {
        // strings_test.go: TestBase64EncodeDecode, TestBase32EncodeDecode; crypto_test.go:
        // TestSha1Sum, TestSha256Sum, TestAdler32Sum.
        expect(&[
            (r#"{{ b64enc "abcdefghijklmnopqrstuvwxyz" }}"#, "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo="),
            (r#"{{ b64dec "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo=" }}"#, "abcdefghijklmnopqrstuvwxyz"),
            (r#"{{ b64dec "a$c" }}"#, "illegal base64 data at input byte 1"),
            (r#"{{ b32enc "abcdefghijklmnopqrstuvwxyz" }}"#, "MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43UOV3HO6DZPI======"),
            (r#"{{ b32dec "MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43UOV3HO6DZPI======" }}"#, "abcdefghijklmnopqrstuvwxyz"),
            (r#"{{ sha1sum "123456789" }}"#, "f7c3bc1d808e04732adf679965ccc34ca7ae3441"),
            (r#"{{ sha256sum "123456789" }}"#, "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"),
            (r#"{{ adler32sum "123456789" }}"#, "152961502"),
        ]);
    }

    #[test]
    fn paths() {
        // functions_test.go: TestBase, TestDir, TestIsAbs, TestClean, TestExt.
        expect(&[
            (r#"{{ base "foo/bar" }} {{ base "/" }} {{ base "" }} {{ base "a/b/" }}"#, "bar / . b"),
            (r#"{{ dir "foo/bar/baz" }} {{ dir "foo" }} {{ dir "/a" }}"#, "foo/bar . /"),
            (r#"{{ isAbs "/foo" }} {{ isAbs "foo" }}"#, "true false"),
            (r#"{{ clean "/foo/../foo/../bar" }} {{ clean "a//b/./../c" }} {{ clean "../../x" }}"#, "/bar a/c ../../x"),
            (r#"{{ ext "/foo/bar/baz.txt" }} {{ ext "a.b/c" }}"#, ".txt "),
        ]);
    }

    #[test]
    fn unavailable_functions_say_why() {
        expect_err(&[
            ("{{ now }}", "now is not available: its result depends on the clock"),
            (r#"{{ randAlphaNum 5 }}"#, "error calling randAlphaNum: randAlphaNum is not available"),
            (r#"{{ env "HOME" }}"#, "env is not available"),
        ]);
    }
}
