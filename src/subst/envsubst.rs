//! Flux's `envsubst` (fluxcd/pkg/envsubst), written here: no Rust crate reproduces its grammar.
//! Rules we copy on purpose, as fluxcd/pkg behaves (parse/parse.go, funcs.go, template.go):
//! - only `${` starts an expression; a bare `$v` or a lone `$` is left as written; at top level
//!   `$$` writes `$` (so `$${v}` is a literal `${v}`);
//! - names are letters, digits and `_`; the character after the name picks the operator, and an
//!   unknown one is `missing closing brace`;
//! - every default form (`:=`, `=`, `:-`, `:+`, `:?`) means "the argument when the value is empty";
//!   arguments run to the first `}` not inside a nested `${…}`, and are evaluated before the lookup;
//! - `#`/`##`/`%`/`%%` take glob patterns whose `*` and `?` also match `/`; `/`, `//`, `/#`, `/%`
//!   match literally; lengths and substrings count bytes; a negative substring length counts back
//!   from the end (`${v:1:-1}`);
//! - in strict mode a variable that does not exist is an error unless a default form is used.

use crate::limits::{Budget, Exhausted};
use std::borrow::Cow;

/// Why a text could not be substituted; its `Display` is fluxcd/pkg's message (or the limit's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubstError {
    /// An expression runs to the end of the text, or its operator is unknown.
    MissingBrace,
    /// A malformed `${#…}`, `${v^…}`, `${v,…}` or `${v/…}`.
    BadSubstitution,
    /// `${` not followed by a name.
    BadName,
    /// `${v:}`: a substring without offset.
    BadFunction,
    /// Strict mode, and the variable does not exist.
    NotSet { name: String },
    /// `${…}` nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The render's budget ran out.
    Budget(Exhausted),
}

impl std::fmt::Display for SubstError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubstError::MissingBrace => f.write_str("missing closing brace"),
            SubstError::BadSubstitution => f.write_str("bad substitution"),
            SubstError::BadName => f.write_str("unable to parse variable name"),
            SubstError::BadFunction => f.write_str("unable to parse substitution within function"),
            SubstError::NotSet { name } => write!(f, "variable not set (strict mode): {name:?}"),
            SubstError::TooDeep => write!(f, "substitution nested more than {MAX_DEPTH} levels deep"),
            SubstError::Budget(exhausted) => exhausted.fmt(f),
        }
    }
}

impl From<Exhausted> for SubstError {
    fn from(exhausted: Exhausted) -> Self {
        SubstError::Budget(exhausted)
    }
}

/// Substitutes `text`. `lookup` returns `None` for a variable that does not exist. Every
/// expansion is a step and its result output, charged to the render's `budget`: a large variable
/// referenced many times fails with the limit's message instead of exhausting memory.
pub fn substitute<'v>(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<&'v str>,
    strict: bool,
    budget: &Budget,
) -> Result<String, SubstError> {
    let chars: Vec<char> = text.chars().collect();
    let mut eval = Eval { chars: &chars, pos: 0, lookup, strict, depth: 0, budget };
    eval.top()
}

/// How deep `${…}` may nest inside arguments. Flux has no limit; without one, hostile text
/// exhausts the stack. Real manifests nest one or two levels.
const MAX_DEPTH: usize = 64;

struct Eval<'a, 'v> {
    chars: &'a [char],
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<&'v str>,
    strict: bool,
    depth: usize,
    budget: &'a Budget,
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl<'v> Eval<'_, 'v> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn top(&mut self) -> Result<String, SubstError> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            match (c, self.peek_at(1)) {
                ('$', Some('$')) => {
                    out.push('$');
                    self.pos += 2;
                }
                ('$', Some('{')) => {
                    self.pos += 2;
                    out.push_str(&self.expression()?);
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(out)
    }

    /// The text of an argument, up to (not including) the closing `}` of the expression, with
    /// nested `${…}` evaluated and `\/`, `\\` unescaped. `stop_at_slash` ends it at an unescaped `/`.
    fn argument(&mut self, stop_at_slash: bool) -> Result<String, SubstError> {
        let mut out = String::new();
        loop {
            match (self.peek(), self.peek_at(1)) {
                (None, _) => return Err(SubstError::MissingBrace),
                (Some('}'), _) => return Ok(out),
                (Some('/'), _) if stop_at_slash => return Ok(out),
                (Some('\\'), Some(c @ ('/' | '\\'))) => {
                    out.push(c);
                    self.pos += 2;
                }
                (Some('$'), Some('{')) => {
                    self.pos += 2;
                    out.push_str(&self.expression()?);
                }
                (Some(c), _) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn close(&mut self) -> Result<(), SubstError> {
        if self.peek() == Some('}') {
            self.pos += 1;
            Ok(())
        } else {
            Err(SubstError::MissingBrace)
        }
    }

    fn name(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(is_name_char) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// The value of a variable for an operator that needs it to exist in strict mode.
    fn value(&self, name: &str, defaulting: bool) -> Result<&'v str, SubstError> {
        match (self.lookup)(name) {
            Some(value) => Ok(value),
            None if self.strict && !defaulting => Err(SubstError::NotSet { name: name.to_string() }),
            None => Ok(""),
        }
    }

    /// After `${`: one expression through its `}`.
    fn expression(&mut self) -> Result<String, SubstError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SubstError::TooDeep);
        }
        let result = self.budget.charge_steps(1).map_err(SubstError::from).and_then(|()| self.expression_body());
        self.depth -= 1;
        let result = result?;
        self.budget.charge_output(result.len())?;
        Ok(result)
    }

    fn expression_body(&mut self) -> Result<String, SubstError> {
        if self.peek() == Some('#') {
            self.pos += 1;
            let name = self.name();
            if name.is_empty() || self.peek() != Some('}') {
                return Err(SubstError::BadSubstitution);
            }
            self.pos += 1;
            return Ok(self.value(&name, false)?.len().to_string());
        }
        let name = self.name();
        if name.is_empty() {
            return Err(SubstError::BadName);
        }
        match (self.peek(), self.peek_at(1)) {
            (Some('}'), _) => {
                self.pos += 1;
                self.value(&name, false).map(str::to_string)
            }
            (Some(':'), Some('=' | '-' | '+' | '?')) | (Some('='), _) => {
                self.pos += if self.peek() == Some(':') { 2 } else { 1 };
                let default = self.argument(false)?;
                self.close()?;
                let value = self.value(&name, true)?;
                Ok(if value.is_empty() { default } else { value.to_string() })
            }
            (Some(':'), _) => {
                self.pos += 1;
                let spec = self.argument(false)?;
                self.close()?;
                if spec.is_empty() {
                    return Err(SubstError::BadFunction);
                }
                let value = self.value(&name, false)?;
                Ok(substring(value, &spec))
            }
            (Some(c @ ('^' | ',')), _) => {
                self.pos += 1;
                let all = self.peek() == Some(c);
                if all {
                    self.pos += 1;
                }
                if self.peek() != Some('}') {
                    return Err(SubstError::BadSubstitution);
                }
                self.pos += 1;
                let value = self.value(&name, false)?;
                Ok(change_case(value, c == '^', all))
            }
            (Some(c @ ('#' | '%')), _) => {
                self.pos += 1;
                let longest = self.peek() == Some(c);
                if longest {
                    self.pos += 1;
                }
                let pattern = self.argument(false)?;
                self.close()?;
                let value = self.value(&name, false)?;
                Ok(trim(value, &pattern, c == '#', longest))
            }
            (Some('/'), _) => {
                self.pos += 1;
                let mode = match self.peek() {
                    Some(c @ ('/' | '#' | '%')) => {
                        self.pos += 1;
                        Some(c)
                    }
                    _ => None,
                };
                let from = self.argument(true)?;
                if self.peek() != Some('/') {
                    return Err(SubstError::BadSubstitution);
                }
                self.pos += 1;
                let to = self.argument(false)?;
                self.close()?;
                let value = self.value(&name, false)?;
                replace(value, &from, &to, mode, self.budget)
            }
            _ => Err(SubstError::MissingBrace),
        }
    }
}

/// `${v:offset}` / `${v:offset:length}` on bytes, as fluxcd/pkg's `toSubstr` (bash's rules): an
/// unparsable offset or length keeps the value, a negative offset counts from the end, a negative
/// length ends that many bytes before the end, and a range past the end stops at the end. Sums
/// saturate: Go's `pos+length` wraps and panics for `${v:1:9223372036854775807}`; bash gives the rest.
fn substring(value: &str, spec: &str) -> String {
    let (offset, length) = match spec.split_once(':') {
        Some((o, l)) => (o, Some(l)),
        None => (spec, None),
    };
    let Ok(offset) = offset.parse::<i64>() else { return value.to_string() };
    let bytes = value.as_bytes();
    let len = bytes.len();
    let start = match usize::try_from(offset) {
        Ok(start) => start,
        Err(_) => len.saturating_sub(usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX)),
    };
    let end = match length.map(str::parse::<i64>) {
        None => len,
        Some(Err(_)) => return value.to_string(),
        Some(Ok(l)) => match usize::try_from(l) {
            Ok(l) => start.saturating_add(l).min(len),
            Err(_) => match len.checked_sub(usize::try_from(l.unsigned_abs()).unwrap_or(usize::MAX)) {
                Some(end) => end,
                None => return String::new(),
            },
        },
    };
    match bytes.get(start..end) {
        Some(slice) if start < end => String::from_utf8_lossy(slice).into_owned(),
        _ => String::new(),
    }
}

fn change_case(value: &str, upper: bool, all: bool) -> String {
    match (upper, all) {
        (true, true) => value.to_uppercase(),
        (false, true) => value.to_lowercase(),
        _ => {
            let mut chars = value.chars();
            match chars.next() {
                None => String::new(),
                Some(first) => {
                    let first: String =
                        if upper { first.to_uppercase().collect() } else { first.to_lowercase().collect() };
                    first + chars.as_str()
                }
            }
        }
    }
}

/// `#`/`##` remove the shortest/longest prefix matching a glob, `%`/`%%` the suffix.
///
/// One pass over the value with the glob as an NFA finds every matching cut at once: testing each
/// cut separately is quadratic (`${v##*b*c}` on 100 KB took 15 s).
fn trim(value: &str, pattern: &str, prefix: bool, longest: bool) -> String {
    let Some(glob) = Glob::compile(pattern) else { return value.to_string() };
    let cut = if prefix {
        let tokens: Vec<&Token> = glob.0.iter().collect();
        let ends = value.char_indices().map(|(i, c)| (i + c.len_utf8(), c));
        glob_cuts(&tokens, 0, ends, longest)
    } else {
        // A suffix matches the glob when the reversed suffix matches the reversed glob.
        let tokens: Vec<&Token> = glob.0.iter().rev().collect();
        glob_cuts(&tokens, value.len(), value.char_indices().rev(), longest)
    };
    match cut {
        Some(cut) if prefix => value[cut..].to_string(),
        Some(cut) => value[..cut].to_string(),
        None => value.to_string(),
    }
}

/// Runs `tokens` as an NFA over `chars` (each with the cut it reaches), starting at cut `start`,
/// and returns the first (shortest) or last (longest) cut at which the whole glob has matched.
/// O(text x pattern).
fn glob_cuts(
    tokens: &[&Token],
    start: usize,
    chars: impl Iterator<Item = (usize, char)>,
    longest: bool,
) -> Option<usize> {
    let accept = tokens.len();
    let mut states = vec![false; accept + 1];
    let mut next = vec![false; accept + 1];
    states[0] = true;
    close(tokens, &mut states);
    let mut found = states[accept].then_some(start);
    if found.is_some() && !longest {
        return found;
    }
    for (cut, c) in chars {
        next.iter_mut().for_each(|s| *s = false);
        let mut any = false;
        for p in (0..accept).filter(|&p| states[p]) {
            match tokens[p] {
                Token::Star => next[p] = true,
                token if token.matches_char(c) => next[p + 1] = true,
                _ => continue,
            }
            any = true;
        }
        if !any {
            break;
        }
        std::mem::swap(&mut states, &mut next);
        close(tokens, &mut states);
        if states[accept] {
            found = Some(cut);
            if !longest {
                break;
            }
        }
    }
    found
}

/// Epsilon closure: a star may match nothing.
fn close(tokens: &[&Token], states: &mut [bool]) {
    for p in 0..tokens.len() {
        if states[p] && matches!(tokens[p], Token::Star) {
            states[p + 1] = true;
        }
    }
}

/// The `/` forms; the result's length is known before it is built, so a small value with many
/// matches and a long replacement is refused before the allocation.
fn replace(value: &str, from: &str, to: &str, mode: Option<char>, budget: &Budget) -> Result<String, SubstError> {
    let count = match mode {
        Some('/') if !from.is_empty() => value.matches(from).count(),
        Some('#') => usize::from(value.starts_with(from)),
        Some('%') => usize::from(value.ends_with(from)),
        _ if from.is_empty() => 0,
        _ => usize::from(value.contains(from)),
    };
    let size =
        value.len().saturating_sub(count.saturating_mul(from.len())).saturating_add(count.saturating_mul(to.len()));
    budget.output_fits(size as u64)?;
    Ok(match mode {
        Some('/') if !from.is_empty() => value.replace(from, to),
        Some('#') => match value.strip_prefix(from) {
            Some(rest) => format!("{to}{rest}"),
            None => value.to_string(),
        },
        Some('%') => match value.strip_suffix(from) {
            Some(rest) => format!("{rest}{to}"),
            None => value.to_string(),
        },
        _ if from.is_empty() => value.to_string(),
        _ => value.replacen(from, to, 1),
    })
}

/// A shell glob: `*`, `?`, `[…]` / `[^…]` classes with ranges, `\c` escapes. `*` and `?` match
/// `/` too (Flux's fork of path.Match).
enum Token {
    Literal(char),
    Any,
    Star,
    Class { negated: bool, ranges: Vec<(char, char)> },
}

impl Token {
    /// Whether this one-character token matches `c` (a star is handled by the matcher).
    fn matches_char(&self, c: char) -> bool {
        match self {
            Token::Literal(l) => *l == c,
            Token::Any => true,
            Token::Class { negated, ranges } => ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated,
            Token::Star => false,
        }
    }
}

struct Glob(Vec<Token>);

impl Glob {
    fn compile(pattern: &str) -> Option<Self> {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            tokens.push(match c {
                '*' => Token::Star,
                '?' => Token::Any,
                '\\' => Token::Literal(chars.next()?),
                '[' => {
                    let mut negated = false;
                    let mut ranges = Vec::new();
                    let mut first = true;
                    loop {
                        let c = chars.next()?;
                        match c {
                            '^' if first => negated = true,
                            ']' if !first || !ranges.is_empty() => break,
                            c => {
                                let low = if c == '\\' { chars.next()? } else { c };
                                let mut peek = chars.clone();
                                if peek.next() == Some('-') && peek.clone().next().is_some_and(|n| n != ']') {
                                    chars.next();
                                    let high = chars.next()?;
                                    let high = if high == '\\' { chars.next()? } else { high };
                                    ranges.push((low, high));
                                } else {
                                    ranges.push((low, low));
                                }
                            }
                        }
                        first = false;
                    }
                    if ranges.is_empty() {
                        return None;
                    }
                    Token::Class { negated, ranges }
                }
                c => Token::Literal(c),
            });
        }
        Some(Self(tokens))
    }
}

/// Whether a string could change under substitution: it holds `${` or `$$`.
pub fn may_substitute(text: &str) -> bool {
    text.contains("${") || text.contains("$$")
}

/// Newlines are removed from variable values (kustomize_varsub.go), only `\n`.
pub fn clean_value(value: &str) -> Cow<'_, str> {
    if value.contains('\n') {
        Cow::Owned(value.replace('\n', ""))
    } else {
        Cow::Borrowed(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, strict: bool) -> Result<String, String> {
        let lookup = |name: &str| match name {
            "set" => Some("Hello World"),
            "empty" => Some(""),
            "path" => Some("a/b/c.tar.gz"),
            "n" => Some("2"),
            "b" => Some("B"),
            "uni" => Some("ünïcode"),
            "neg" => Some("-9223372036854775808"),
            "m5" => Some("-5"),
            _ => None,
        };
        substitute(text, &lookup, strict, &Budget::default()).map_err(|err| err.to_string())
    }

    fn ok(text: &str) -> String {
        run(text, false).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn plain_and_escapes() {
        assert_eq!(ok("${set}!"), "Hello World!");
        assert_eq!(ok("$set and $ alone"), "$set and $ alone");
        assert_eq!(ok("$${set} a$$b"), "${set} a$b");
        assert_eq!(ok("$$${set}"), "$Hello World");
        assert_eq!(ok("\\${set}"), "\\Hello World");
        assert_eq!(ok("${unset}"), "");
    }

    #[test]
    fn defaults_all_mean_if_empty() {
        for op in [":=", "=", ":-", ":+", ":?"] {
            assert_eq!(ok(&format!("${{unset{op}d}}")), "d", "{op}");
            assert_eq!(ok(&format!("${{empty{op}d}}")), "d", "{op}");
            assert_eq!(ok(&format!("${{set{op}d}}")), "Hello World", "{op}");
        }
        assert_eq!(ok("${u:=a}b}"), "ab}");
        assert_eq!(ok("${u:=x:y}"), "x:y");
        assert_eq!(ok("${u==d}"), "=d");
        assert_eq!(ok("${u:=${b:=c}}"), "B");
        assert_eq!(ok("${u:=${nob:=c}}"), "c");
        assert_eq!(ok("${u:=a${b}c}"), "aBc");
        assert_eq!(ok("${u:=$${b}}"), "$B");
    }

    #[test]
    fn string_operators() {
        assert_eq!(ok("${#set}"), "11");
        assert_eq!(ok("${set:6}"), "World");
        assert_eq!(ok("${set:0:5}"), "Hello");
        assert_eq!(ok("${set:${n}:3}"), "llo");
        assert_eq!(ok("${set:99}"), "");
        assert_eq!(ok("${set: -5}"), "Hello World");
        assert_eq!(ok("${set^}${uni^^}${set,}${set,,}"), "Hello WorldÜNÏCODEhello Worldhello world");
        assert_eq!(ok("${path#*/}"), "b/c.tar.gz");
        assert_eq!(ok("${path##*/}"), "c.tar.gz");
        assert_eq!(ok("${path%.*}"), "a/b/c.tar");
        assert_eq!(ok("${path%%.*}"), "a/b/c");
        assert_eq!(ok("${path#[a-b]/}"), "b/c.tar.gz");
        assert_eq!(ok("${set/o/0}"), "Hell0 World");
        assert_eq!(ok("${set//o/0}"), "Hell0 W0rld");
        assert_eq!(ok("${set/#Hello/Bye}"), "Bye World");
        assert_eq!(ok("${set/%World/There}"), "Hello There");
        assert_eq!(ok("${set/o*/X}"), "Hello World");
        assert_eq!(ok("${set//o/}"), "Hell Wrld");
        assert_eq!(ok("${path/\\//|}"), "a|b/c.tar.gz");
    }

    #[test]
    fn errors_are_fluxs() {
        for (text, error) in [
            ("${}", "unable to parse variable name"),
            ("${ x}", "unable to parse variable name"),
            ("${set", "missing closing brace"),
            ("${v-d}", "missing closing brace"),
            ("${v.x}", "missing closing brace"),
            ("${set:}", "unable to parse substitution within function"),
            ("${#}", "bad substitution"),
            ("${#set:1}", "bad substitution"),
            ("${set^^^}", "bad substitution"),
            ("${set/a}", "bad substitution"),
        ] {
            assert_eq!(run(text, false), Err(error.to_string()), "{text}");
        }
    }

    #[test]
    fn hostile_text_is_bounded() {
        let deep = format!("{}x{}", "${a:-".repeat(10_000), "}".repeat(10_000));
        assert!(run(&deep, false).is_err_and(|e| e.contains("nested more than 64 levels")));
        // Many stars against a long value: linear-time glob matching, not exponential.
        let stars = format!("${{set##{}z}}", "*".repeat(200));
        assert_eq!(run(&stars, false), Ok("Hello World".to_string()));
        assert_eq!(ok("${path##*/}"), "c.tar.gz");
        assert_eq!(ok("${path%%.*}"), "a/b/c");
        assert_eq!(ok("${path#*/}"), "b/c.tar.gz");
    }

    #[test]
    fn substring_offsets_never_overflow() {
        // As fluxcd/pkg's toSubstr, which panics on the first (Go's `pos+length` wraps); bash gives the rest.
        assert_eq!(ok("${set:1:9223372036854775807}"), "ello World");
        assert_eq!(ok("${set:9223372036854775807:9223372036854775807}"), "");
        assert_eq!(ok("${set:${neg}}"), "Hello World");
        assert_eq!(ok("${set:${m5}}"), "World");
        assert_eq!(ok("${set:${m5}:2}"), "Wo");
        assert_eq!(ok("${set:${m5}:${neg}}"), "");
        assert_eq!(ok("${set:0:-9223372036854775808}"), "");
        assert_eq!(ok("${set:1:-1}"), "ello Worl");
        assert_eq!(ok("${set:6:-6}"), "");
        assert_eq!(ok("${set:99:-1}"), "");
        assert_eq!(ok("${set:99999999999999999999}"), "Hello World");
        assert_eq!(ok("${set:1:99999999999999999999}"), "Hello World");
        assert_eq!(ok("${uni:1:2}"), "\u{fffd}n");
    }

    #[test]
    fn trims_are_linear_and_match_the_old_rules() {
        assert_eq!(ok("${path#*.}"), "tar.gz");
        assert_eq!(ok("${path##*.}"), "gz");
        assert_eq!(ok("${path%/*}"), "a/b");
        assert_eq!(ok("${path%%/*}"), "a");
        assert_eq!(ok("${path#*}"), "a/b/c.tar.gz");
        assert_eq!(ok("${path##*}"), "");
        assert_eq!(ok("${path%%[!a]}"), "a/b/c.tar.gz");
        assert_eq!(ok("${path#[^/]?}"), "b/c.tar.gz");
        assert_eq!(ok("${path#?/[a-c]}"), "/c.tar.gz");
        assert_eq!(ok("${path%.?z}"), "a/b/c.tar");
        assert_eq!(ok("${path#[z-a]}"), "a/b/c.tar.gz");
        assert_eq!(ok("${path#\\a}"), "/b/c.tar.gz");
        assert_eq!(ok("${uni%%ï*}"), "ün");
        let big = "ab".repeat(50_000) + "c";
        let lookup = |name: &str| (name == "v").then_some(big.as_str());
        assert_eq!(substitute("${v##*b*c}", &lookup, false, &Budget::default()), Ok(String::new()));
        assert_eq!(substitute("${v%%a*b*}", &lookup, false, &Budget::default()), Ok(String::new()));
        assert_eq!(substitute("${v#*b*b}", &lookup, false, &Budget::default()), Ok("ab".repeat(49_998) + "c"));
    }

    #[test]
    fn expansions_are_charged_to_the_budget() {
        use crate::limits::Limits;
        let big = "x".repeat(1 << 20);
        let lookup = |name: &str| (name == "v").then_some(big.as_str());
        let budget = Budget::new(Limits { max_output_bytes: 8 << 20, ..Limits::default() });
        let text = "${v}".repeat(3_000);
        let err = substitute(&text, &lookup, false, &budget).unwrap_err().to_string();
        assert!(err.contains("--max-output-size"), "{err}");
        // A short value replaced many times by a long one is refused before it is built.
        let small = |name: &str| match name {
            "a" => Some("aaaaaaaaaaaaaaaa"),
            "b" => Some(big.as_str()),
            _ => None,
        };
        let budget = Budget::new(Limits { max_output_bytes: 8 << 20, ..Limits::default() });
        let err = substitute("${a//a/${b}}", &small, false, &budget).unwrap_err().to_string();
        assert!(err.contains("--max-output-size"), "{err}");
    }

    #[test]
    fn strict_mode() {
        assert_eq!(run("${unset}", true), Err("variable not set (strict mode): \"unset\"".into()));
        assert_eq!(run("${#unset}", true), Err("variable not set (strict mode): \"unset\"".into()));
        assert_eq!(run("${unset:=d}", true), Ok("d".into()));
        assert_eq!(run("${empty}", true), Ok(String::new()));
        assert_eq!(run("${set:=${unknown}}", true), Err("variable not set (strict mode): \"unknown\"".into()));
    }

    /// Shell semantics by brute force: every cut tried with a recursive matcher.
    fn reference_trim(value: &str, pattern: &str, prefix: bool, longest: bool) -> String {
        fn matches(tokens: &[Token], text: &[char]) -> bool {
            match tokens.split_first() {
                None => text.is_empty(),
                Some((Token::Star, rest)) => (0..=text.len()).any(|i| matches(rest, &text[i..])),
                Some((token, rest)) => {
                    text.first().is_some_and(|c| token.matches_char(*c)) && matches(rest, &text[1..])
                }
            }
        }
        let Some(glob) = Glob::compile(pattern) else { return value.to_string() };
        let mut cuts: Vec<usize> = value.char_indices().map(|(i, _)| i).chain([value.len()]).collect();
        if longest == prefix {
            cuts.reverse();
        }
        for cut in cuts {
            let (candidate, rest) =
                if prefix { (&value[..cut], &value[cut..]) } else { (&value[cut..], &value[..cut]) };
            if matches(&glob.0, &candidate.chars().collect::<Vec<_>>()) {
                return rest.to_string();
            }
        }
        value.to_string()
    }

    #[test]
    fn one_pass_trimming_agrees_with_trying_every_cut() {
        let values = ["", "a", "ab", "aab", "abab", "a/b/c.tar.gz", "xbxbxc", "ünï/cödé", "**", "b?c"];
        let patterns = ["", "*", "a", "a*", "*b", "*b*c", "?", "??", "*/", ".*", "[ab]*", "[^a]*", "*\\*", "a*b*"];
        for value in values {
            for pattern in patterns {
                for (prefix, longest) in [(true, false), (true, true), (false, false), (false, true)] {
                    assert_eq!(
                        trim(value, pattern, prefix, longest),
                        reference_trim(value, pattern, prefix, longest),
                        "value {value:?} pattern {pattern:?} prefix {prefix} longest {longest}"
                    );
                }
            }
        }
    }
}
