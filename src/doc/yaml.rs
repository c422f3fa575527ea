//! YAML reading and writing with the rules Kubernetes tools expect (YAML 1.1 readers downstream).
//!
//! The crate is `serde-saphyr`, chosen by testing the rules rather than by reputation:
//! - `strict_booleans`: only `true`/`false` are booleans, so an unquoted `on` stays the string it
//!   is for kyaml (yaml.v3) readers, and we never turn a string into a boolean;
//! - `legacy_octal_numbers`: an unquoted `0644` is the integer 420, as Kubernetes (YAML 1.1) reads it;
//! - its serializer quotes every string a YAML 1.1 reader would take for another type
//!   (`"on"`, `"y"`, `"0644"`, `"1e3"`, `"~"`, `"12:30"`), writes multi-line strings as literal
//!   block scalars with the right chomping, and keeps key order (we hand it `preserve_order` maps);
//! - documents that hold only comments are skipped;
//! - alias expansion, depth and size are bounded by its budget (billion-laughs safe).
//!
//! The `serde_yaml`/`serde_yml` family fails the first two rules (it re-quotes `"on"` inconsistently
//! and reads `0644` as 644), which is why it is not used.

use super::Value;
use serde_saphyr::{budget, options, ser_options, NonFiniteFloatPolicy, Options, SerializerOptions};

/// A YAML syntax error with the position the parser reported (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub message: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// The text is valid YAML, but holds a value JSON and Kubernetes cannot (an integer beyond
    /// 64 bits, a non-finite float): the message says so itself, not "not valid YAML".
    pub unrepresentable: bool,
    /// Where in `message` the hint we add to the parser's own words begins (`: check this line's
    /// indentation…`), for those who print the parser's message alone.
    pub hint_at: Option<usize>,
}

impl YamlError {
    /// The parser's message, without our hint.
    pub fn parser_message(&self) -> &str {
        self.hint_at.and_then(|at| self.message.get(..at)).unwrap_or(&self.message)
    }
}

/// The deepest nesting we accept. Kubernetes objects, CRD schemas included, stay far below it;
/// the limit keeps hostile input from exhausting the stack.
const MAX_DEPTH: usize = 256;

fn read_options(input_len: usize, fixing: bool) -> Options {
    // The budget grows with the input: every node costs at least one byte of text, so a limit
    // proportional to the size never refuses honest input and still stops alias bombs.
    let nodes = input_len.saturating_add(1024);
    options! {
        legacy_octal_numbers: true,
        strict_booleans: true,
        // A `!!binary` scalar is its text, as kyaml keeps it: decoding would change the value
        // (and refuse bytes that are not UTF-8).
        ignore_binary_tag_for_string: true,
        // While fixing (`doc::scalars`), `.iNf` and the like reach the value reader, which puts
        // their text back or refuses them itself.
        non_finite_float_policy: if fixing { NonFiniteFloatPolicy::PassThrough } else { NonFiniteFloatPolicy::Reject },
        budget: budget! {
            max_events: nodes.saturating_mul(2),
            max_nodes: nodes,
            max_documents: nodes,
            max_depth: MAX_DEPTH,
            max_anchors: nodes,
            max_aliases: nodes,
        },
    }
}

fn write_options() -> SerializerOptions {
    ser_options! {
        // Never fold a long single-line string into `>`: kustomize and kubectl keep them on one
        // line, and folding makes diffs of rendered output noisy.
        folded_wrap_chars: usize::MAX,
    }
}

/// Reads a stream of YAML documents. Documents that are empty or hold only comments are skipped.
pub fn read_yaml_documents(text: &str) -> Result<Vec<Value>, YamlError> {
    let documents: Vec<super::Strict> = read_yaml_documents_as(text)?;
    Ok(documents.into_iter().map(|d| d.0).filter(|d| !d.is_null()).collect())
}

/// Where a document starts: byte offset and 1-based column of its first character.
pub type Start = Option<(usize, usize)>;

/// The [`Start`] a reader location names; the reader knows byte offsets for YAML text.
pub fn start_of(location: &serde_saphyr::Location) -> Start {
    let offset = location.span().byte_offset().and_then(|o| usize::try_from(o).ok());
    offset.zip(usize::try_from(location.column()).ok())
}

/// Whether a stream declares `%TAG` handles: a node copied out of it alone would lose their
/// meaning, so it is written from its value instead.
pub fn declares_tag_handles(text: &str) -> bool {
    text.lines().any(|line| line.starts_with("%TAG"))
}

/// [`read_yaml_documents`], with each document's [`Start`] when the reader knows it.
pub fn read_yaml_documents_with_starts(text: &str) -> Result<Vec<(Value, Start)>, YamlError> {
    let documents: Vec<serde_saphyr::Spanned<super::Strict>> = read_yaml_documents_as(text)?;
    Ok(documents.into_iter().filter(|d| !d.value.0.is_null()).map(|d| (d.value.0, start_of(&d.referenced))).collect())
}

/// Reads a stream of YAML documents into `T` as they are parsed (a caller's own visitor can
/// keep less than a whole value tree). Empty documents reach `T` as a unit.
///
/// Values are read through [`super::Strict`], which `T` must use for every value it keeps: plain
/// scalars serde-saphyr types otherwise than YAML (`tRUE`, `.iNf`) are put back as their text
/// there (`doc::scalars`).
pub fn read_yaml_documents_as<T: serde::de::DeserializeOwned>(text: &str) -> Result<Vec<T>, YamlError> {
    let (fixes, refused) = super::scalars::fixes(text);
    let fixing = !fixes.is_empty();
    let read = || serde_saphyr::from_multiple_with_options(text, read_options(text.len(), fixing));
    let documents = if fixing { super::scalars::with_fixes(fixes, read) } else { read() };
    let documents = documents.map_err(|err| {
        let location = err.location();
        let message = err.without_snippet().to_string();
        // The crate prefixes "error: line L column C: "; we report the position separately.
        let message = message.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
        let message = match message.split_once(": ") {
            Some((head, rest)) if head.starts_with("line ") => rest.to_string(),
            _ => message,
        };
        // The position is reported separately; drop the parser's " at line L, column C".
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_string(),
            None => message,
        };
        // The budget's own wording names its internals; say which limit it is and what to do.
        let mut hint_at = None;
        let message = if message.starts_with("budget breached: ScalarBytes") {
            "the input holds more than 64 MiB of scalar text: Kubernetes stores whole objects up to 1.5 MiB; \
             keep large data out of the package"
                .to_string()
        } else if message.starts_with("budget breached: InputBytes") {
            "the input is larger than 256 MiB: split the package".to_string()
        } else if message.starts_with("budget breached: Depth") || message.starts_with("recursion limit exceeded") {
            format!(
                "nesting deeper than {MAX_DEPTH} levels: Kubernetes objects nest far less; look for unclosed brackets"
            )
        } else if message.starts_with("budget breached") {
            "aliases expand to more nodes than the input's size allows (a billion-laughs document?): \
             write repeated parts out instead of nesting aliases"
                .to_string()
        } else {
            let (message, at) = syntax_hint(message);
            hint_at = at;
            message
        };
        // serde-saphyr's wording names its policy option; say what it is and what to do.
        let non_finite = message.strip_prefix("non-finite float `").and_then(|m| m.split('`').next());
        let (message, unrepresentable) = match non_finite {
            Some(literal) => (super::non_finite_message(literal), true),
            None => (message, false),
        };
        YamlError {
            unrepresentable,
            hint_at: hint_at.filter(|_| !unrepresentable),
            message,
            line: location.as_ref().map(|l| l.line()),
            column: location.as_ref().map(|l| l.column()),
        }
    })?;
    // Reported after a successful read, so syntax errors keep their own message.
    match refused {
        Some(refused) => Err(refused.into()),
        None => Ok(documents),
    }
}

/// The parser says what it saw; add what to change for the mistakes people make by hand (and
/// where the added hint begins, when the parser's words are kept before it).
fn syntax_hint(message: String) -> (String, Option<usize>) {
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(", set DuplicateKeyPolicy").next().unwrap_or(rest);
        let message =
            format!("duplicate key {key:?} in one mapping: remove one of them (Kubernetes refuses duplicates too)");
        return (message, None);
    }
    // serde's wording ("use Option<String>") speaks to the programmer; only a null key gets here.
    if message.starts_with("cannot deserialize null into string") {
        let message = "a mapping key is null (~, null or nothing before the colon): keys are text; \
                       write it quoted, e.g. \"null\": x";
        return (message.to_string(), None);
    }
    let hint = if message.contains("tabs disallowed") {
        "indent with spaces, not tabs"
    } else if message.contains("mapping values are not allowed") {
        "check this line's indentation, or quote a value that holds \": \""
    } else if message.contains("\"-\" is only valid inside a block") {
        "is a [ or { on an earlier line left open?"
    } else {
        return (message, None);
    };
    let at = message.len();
    (format!("{message}: {hint}"), Some(at))
}

/// Parses a command-line value (`--set key=value`) as a YAML scalar, so `3` is an integer and
/// `true` a boolean; anything that does not parse as a single scalar stays a string.
pub fn parse_scalar(text: &str) -> Value {
    // Most rendered and substituted texts are names and small numbers: no reader is needed.
    if super::plainly_text(text) {
        return Value::String(text.to_string());
    }
    if let Some(number) = super::plainly_integer(text) {
        return Value::from(number);
    }
    match read_yaml_documents_as::<super::Strict>(text).as_deref() {
        Ok([super::Strict(value @ (Value::Bool(_) | Value::Number(_) | Value::String(_)))]) => value.clone(),
        Ok([super::Strict(Value::Null)]) if !text.is_empty() => Value::Null,
        _ => Value::String(text.to_string()),
    }
}

/// Writes one document (no leading `---`), ending with a newline.
pub fn to_yaml(value: &Value) -> String {
    // Serializing a `serde_json::Value` cannot fail: keys are strings and floats are finite.
    let mut text = serde_saphyr::to_string_with_options(&Plain(value), write_options()).unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Writes one document as [`to_yaml`] does, with the single-line strings at `pointers` (JSON
/// pointers) double-quoted even where the emitter would write them plain.
pub fn to_yaml_keeping_quotes(value: &Value, pointers: &[String]) -> String {
    let pointers: std::collections::HashSet<&str> = pointers.iter().map(String::as_str).collect();
    let styled = Styled { value, pointer: String::new(), pointers: &pointers };
    let mut text = serde_saphyr::to_string_with_options(&styled, write_options()).unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Writes one document as [`to_yaml`] does, but a single-line string value for which `single`
/// holds and that cannot be written plain is single-quoted, as Go's YAML writer quotes it,
/// instead of double-quoted with backslash escapes: the text is read next by something other
/// than YAML (a template engine, which `\"` would break) before it is read as YAML again. Keys
/// are written as [`to_yaml`] writes them.
pub fn to_yaml_single_quoting(value: &Value, single: &dyn Fn(&str) -> bool) -> String {
    let mut text =
        serde_saphyr::to_string_with_options(&SingleQuoting(value, single, false), write_options()).unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// [`to_yaml_single_quoting`], but every single-line string for which `single` holds is
/// single-quoted even where it could be plain (unless it holds `'`, which single quotes would
/// double): what a JSON string (always a quoted string) is in YAML text that a template engine
/// reads first.
pub fn to_yaml_quoting_templates(value: &Value, single: &dyn Fn(&str) -> bool) -> String {
    let always = |s: &str| single(s) && !s.contains('\'');
    let mut text =
        serde_saphyr::to_string_with_options(&SingleQuoting(value, &always, true), write_options()).unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Whether `text` must be written double-quoted because the literal block the writer would
/// choose does not read back in every reader. A block takes its indentation from its first
/// non-empty line; the writer adds an indentation indicator only when that line starts with a
/// space, so one starting with a tab sits where libyaml and Go's YAML readers (kubectl,
/// kustomize, kyaml) expect indentation, and they refuse the document ("found a tab character
/// where an indentation space is expected"). YAML 1.2 readers, ours included, take the tab as
/// text. Double quotes hold any string (kyaml's writer double-quotes a string its block cannot
/// hold).
fn block_unreadable(text: &str) -> bool {
    text.contains('\n') && text.split('\n').find(|line| !line.is_empty()).is_some_and(|line| line.starts_with('\t'))
}

/// Whether the writer writes `text` as a plain scalar in a mapping value.
pub fn writes_plain(text: &str) -> bool {
    serde_saphyr::to_string(&text).is_ok_and(|written| !written.starts_with(['"', '\'']))
}

/// See [`to_yaml_single_quoting`]; the flag: single-quote even what could be plain.
struct SingleQuoting<'a>(&'a Value, &'a dyn Fn(&str) -> bool, bool);

impl serde::Serialize for SingleQuoting<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::String(s) if block_unreadable(s) => serde_saphyr::DoubleQuoted(s.as_str()).serialize(serializer),
            Value::String(s) if (self.1)(s) && !s.chars().any(char::is_control) && (self.2 || !writes_plain(s)) => {
                serde_saphyr::SingleQuoted(s.as_str()).serialize(serializer)
            }
            Value::Number(number) => serialize_number(number, serializer),
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    out.serialize_entry(key, &SingleQuoting(value, self.1, self.2))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for value in items {
                    out.serialize_element(&SingleQuoting(value, self.1, self.2))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// A value on its way out. serde_json keeps a number's digits (`arbitrary_precision`, so that an
/// integer beyond 64 bits keeps them) and hands them to a serializer as a private struct, which
/// serde-saphyr would write as a mapping: numbers are written through [`serialize_number`].
struct Plain<'a>(&'a Value);

impl serde::Serialize for Plain<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::String(s) if block_unreadable(s) => serde_saphyr::DoubleQuoted(s.as_str()).serialize(serializer),
            Value::Number(number) => serialize_number(number, serializer),
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    out.serialize_entry(key, &Plain(value))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for value in items {
                    out.serialize_element(&Plain(value))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// A number as the integer or float it is: integers in up to 128 bits with every digit (the
/// readers hold no larger ones), anything else as the nearest float, as before digits were kept.
fn serialize_number<S: serde::Serializer>(number: &serde_json::Number, serializer: S) -> Result<S::Ok, S::Error> {
    if let Some(n) = number.as_u64() {
        return serializer.serialize_u64(n);
    }
    if let Some(n) = number.as_i64() {
        return serializer.serialize_i64(n);
    }
    let digits = number.as_str();
    if let Ok(n) = digits.parse::<u128>() {
        return serializer.serialize_u128(n);
    }
    if let Ok(n) = digits.parse::<i128>() {
        return serializer.serialize_i128(n);
    }
    serializer.serialize_f64(number.as_f64().unwrap_or_default())
}

/// A value on its way out, knowing its JSON pointer.
struct Styled<'a> {
    value: &'a Value,
    pointer: String,
    pointers: &'a std::collections::HashSet<&'a str>,
}

impl<'a> Styled<'a> {
    fn child(&self, value: &'a Value, segment: &str) -> Styled<'a> {
        Styled {
            value,
            pointer: format!("{}/{}", self.pointer, super::pointer_segment(segment)),
            pointers: self.pointers,
        }
    }
}

impl serde::Serialize for Styled<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.value {
            Value::String(s)
                if block_unreadable(s) || (!s.contains('\n') && self.pointers.contains(self.pointer.as_str())) =>
            {
                serde_saphyr::DoubleQuoted(s.as_str()).serialize(serializer)
            }
            Value::Number(number) => serialize_number(number, serializer),
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    out.serialize_entry(key, &self.child(value, key))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for (i, value) in items.iter().enumerate() {
                    out.serialize_element(&self.child(value, &i.to_string()))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// Writes a stream of documents separated by `---`.
pub fn to_yaml_stream(values: &[Value]) -> String {
    let mut out = String::new();
    for (i, value) in values.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&to_yaml(value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `parse_scalar`'s shortcuts give what the reader gives.
    #[test]
    fn parse_scalar_shortcuts_agree_with_the_reader() {
        let mut texts: Vec<String> =
            ["0", "00", "07", "0644", "1", "-1", "+1", "10", "999999999999999999", "9999999999999999999", "1_000"]
                .iter()
                .map(|t| t.to_string())
                .collect();
        texts.extend((0..2000u64).map(|i| (i * 7919 % 100_003).to_string()));
        texts.extend(["port-0001", "a.b/c", "tenant_1", "x86", "e3", "E3"].iter().map(|t| t.to_string()));
        for text in &texts {
            let slow = match read_yaml_documents_as::<super::super::Strict>(text).as_deref() {
                Ok([super::super::Strict(value @ (Value::Bool(_) | Value::Number(_) | Value::String(_)))]) => {
                    value.clone()
                }
                Ok([super::super::Strict(Value::Null)]) => Value::Null,
                _ => Value::String(text.clone()),
            };
            assert_eq!(parse_scalar(text), slow, "{text:?}");
        }
    }

    fn read_one(text: &str) -> Value {
        let mut docs = read_yaml_documents(text).unwrap_or_default();
        assert_eq!(docs.len(), 1, "{text}");
        docs.remove(0)
    }

    #[test]
    fn unquoted_octal_is_read_as_kubernetes_reads_it() {
        assert_eq!(read_one("mode: 0644"), json!({"mode": 420}));
        assert_eq!(read_one("mode: '0644'"), json!({"mode": "0644"}));
    }

    #[test]
    fn only_true_and_false_are_booleans() {
        assert_eq!(read_one("a: on\nb: yes\nc: true"), json!({"a": "on", "b": "yes", "c": true}));
    }

    #[test]
    fn strings_that_yaml_1_1_reads_as_other_types_are_quoted() {
        for s in ["on", "off", "yes", "no", "y", "n", "true", "~", "0644", "1e3", ".5", "null", "12:30"] {
            let text = to_yaml(&json!({ "k": s }));
            assert_eq!(text, format!("k: \"{s}\"\n"), "{s}");
            assert_eq!(read_one(&text), json!({ "k": s }));
        }
    }

    #[test]
    fn multi_line_strings_are_block_scalars() {
        assert_eq!(to_yaml(&json!({"k": "a\nb\n"})), "k: |\n  a\n  b\n");
        assert_eq!(to_yaml(&json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
    }

    /// Go's readers refuse a block whose first text line starts with a tab; double quotes
    /// hold it. A tab after the first line, or after a space the indicator accounts for, stays.
    #[test]
    fn a_block_starting_with_a_tab_is_double_quoted() {
        let cases = [
            ("\tline1\nline2", "k: \"\\tline1\\nline2\"\n"),
            ("\n\tline", "k: \"\\n\\tline\"\n"),
            ("line1\n\tline2", "k: |-\n  line1\n  \tline2\n"),
        ];
        for (s, written) in cases {
            for text in [to_yaml(&json!({ "k": s })), to_yaml_keeping_quotes(&json!({ "k": s }), &[])] {
                assert_eq!(text, written, "{s:?}");
                assert_eq!(read_one(&text), json!({ "k": s }));
            }
            assert_eq!(to_yaml_single_quoting(&json!({ "k": s }), &|_| true), written, "{s:?}");
        }
    }

    #[test]
    fn long_lines_are_not_folded() {
        let long = "word ".repeat(40);
        let text = to_yaml(&json!({ "k": long }));
        assert_eq!(text.lines().count(), 1, "{text}");
        assert_eq!(read_one(&text), json!({ "k": long }));
    }

    #[test]
    fn key_order_is_kept() {
        let value = read_one("z: 1\na: 2\nm: 3");
        assert_eq!(to_yaml(&value), "z: 1\na: 2\nm: 3\n");
    }

    #[test]
    fn comment_only_documents_are_skipped() {
        let docs = read_yaml_documents("# header\n---\na: 1\n---\n# trailing\n").unwrap_or_default();
        assert_eq!(docs, vec![json!({"a": 1})]);
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let err = read_yaml_documents("a: [1, 2\nb: 3").err();
        let err = err.as_ref();
        assert!(err.and_then(|e| e.line).is_some(), "{err:?}");
    }

    #[test]
    fn scalars_from_the_command_line() {
        assert_eq!(parse_scalar("3"), json!(3));
        assert_eq!(parse_scalar("true"), json!(true));
        assert_eq!(parse_scalar("on"), json!("on"));
        assert_eq!(parse_scalar("a: b"), json!("a: b"));
        assert_eq!(parse_scalar(""), json!(""));
    }
}
