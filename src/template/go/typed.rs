//! Go types the crate's values do not carry. Sprig's arithmetic gives `int64` where a template
//! constant is an `int`; `keys`, `splitList` and the like give `[]string`, `until` `[]int`,
//! `chunk` `[][]interface {}`, `split` `map[string]string`, and `semver` a `*semver.Version`
//! that prints as `1.2.3`. The crate has one integer, one list and one map; `typeOf`, `kindIs`,
//! printf's `%T` and error markers, `deepEqual` and Go's check of an `int` parameter see the
//! difference, and users read what they print.
//!
//! A template that can see the difference ([`uses`]) runs typed: a Sprig function's result
//! is tagged with its Go type (a two-element list `[value, marker]` whose marker no template can
//! build), every read of the crate's own goes through the rewritten tree's `RESOLVE`, which
//! takes the tag off ([`plain`]), and each function receives its arguments without tags unless
//! it reports types ([`define`](super::define)). Other templates run as before: nothing is
//! tagged. Which form of each function a template calls is chosen when it is compiled
//! ([`Functions`](super::Functions)), so an `include` runs as its own template says.
//!
//! What a function stores in a list or map is stored without its tag: `typeOf (index (list (add
//! 1 2)) 0)` is `int` (Go: `int64`).

use super::fmt::tagged_name;
use super::value::GoValue;
pub use super::value::{tag, tagged, Type};
use gotmpl::parse::{Expr, ListNode, Node, Number, PipeNode};
use gotmpl::TemplateError;

/// The value as the crate reads it (compared, ranged over, passed to a builtin), and as most
/// functions receive it: without its tag; a semver as the map of its fields, which a function
/// taking a string refuses, as Go refuses a `*semver.Version`.
pub fn plain(value: &GoValue) -> GoValue {
    match tagged(value) {
        Some((_, inner)) => inner.clone(),
        None => value.clone(),
    }
}

/// The value as printed and as a function that prints or stores it receives it: a semver as its
/// text (Go's `fmt` and Sprig's `toString` call its `String`).
pub fn printed(value: &GoValue) -> GoValue {
    match tagged(value) {
        Some((Type::Semver, fields)) => semver_text(fields),
        Some((_, inner)) => inner.clone(),
        None => value.clone(),
    }
}

/// A semver's text (Go's `Version.String`), from its fields.
pub fn semver_text(fields: &GoValue) -> GoValue {
    match fields {
        GoValue::Map(map) => map.get("String").cloned().unwrap_or(GoValue::Nil),
        _ => GoValue::Nil,
    }
}

/// The functions whose results carry a type the crate does not tell apart.
fn result_type(name: &str) -> Option<Type> {
    Some(match name {
        "add" | "add1" | "sub" | "mul" | "div" | "mod" | "max" | "min" | "biggest" | "int64" | "toDecimal" => {
            Type::Int64
        }
        "splitList" | "sortAlpha" | "keys" | "regexFindAll" | "mustRegexFindAll" | "regexSplit" | "mustRegexSplit"
        | "toStrings" => Type::Strings,
        "until" | "untilStep" => Type::Ints,
        "chunk" | "mustChunk" => Type::Lists,
        "split" | "splitn" => Type::StringMap,
        "semver" => Type::Semver,
        _ => return None,
    })
}

/// The functions that report their arguments' types, and so receive them tagged.
fn reports_types(name: &str) -> bool {
    matches!(
        name,
        "typeOf" | "kindOf" | "typeIs" | "kindIs" | "typeIsLike" | "deepEqual" | "printf" | "has" | "mustHas"
    )
}

/// The functions that receive their arguments tagged without reporting types: they return one as
/// it is (`default`), compare one as Go's `reflect.DeepEqual` does (`has`), or print them as
/// Go's `fmt.Sprint` does (a semver is not a string there: `print 1 (semver "1.2.3")` has a
/// space).
fn keeps_tags(name: &str) -> bool {
    matches!(
        name,
        "default" | "coalesce" | "ternary" | "has" | "mustHas" | "print" | "println" | "html" | "js" | "urlquery"
    )
}

/// The functions that print a semver as its text or store it (in a list or map, where it is
/// kept as that text).
fn prints(name: &str) -> bool {
    matches!(
        name,
        "toString"
            | "toStrings"
            | "cat"
            | "quote"
            | "squote"
            | "toJson"
            | "mustToJson"
            | "toPrettyJson"
            | "mustToPrettyJson"
            | "toRawJson"
            | "mustToRawJson"
            | "list"
            | "tuple"
            | "dict"
            | "append"
            | "push"
            | "mustAppend"
            | "mustPush"
            | "prepend"
            | "mustPrepend"
            | "set"
    )
}

/// Which parameters of a function are Go `int`s: these positions, or every one from the first.
#[derive(Clone, Copy)]
pub enum Params {
    At(&'static [usize]),
    From(usize),
}

impl Params {
    fn contains(self, i: usize) -> bool {
        match self {
            Params::At(at) => at.contains(&i),
            Params::From(first) => i >= first,
        }
    }
}

/// The `int` parameters of Sprig's functions (Go refuses an `int64` there and converts a whole
/// float constant).
pub fn int_params(name: &str) -> Option<Params> {
    Some(match name {
        "abbrev" | "trunc" | "repeat" | "wrap" | "wrapWith" | "indent" | "nindent" | "until" | "chunk"
        | "mustChunk" => Params::At(&[0]),
        "abbrevboth" | "substr" => Params::At(&[0, 1]),
        "untilStep" => Params::At(&[0, 1, 2]),
        "plural" | "regexFindAll" | "mustRegexFindAll" | "regexSplit" | "mustRegexSplit" => Params::At(&[2]),
        "splitn" | "round" => Params::At(&[1]),
        "seq" => Params::From(0),
        _ => return None,
    })
}

/// The `map[string]interface {}` parameters of Sprig's functions (Go refuses a
/// `map[string]string` or a semver there).
fn map_params(name: &str) -> Option<Params> {
    Some(match name {
        "hasKey" | "get" | "set" | "unset" | "values" | "pick" | "omit" => Params::At(&[0]),
        "pluck" => Params::From(1),
        "keys" | "merge" | "mergeOverwrite" | "mustMerge" | "mustMergeOverwrite" => Params::From(0),
        _ => return None,
    })
}

/// What [`define`](super::define) needs to know of a function, looked up once.
#[derive(Clone, Copy)]
pub struct Signature {
    result: Option<Type>,
    /// It receives its arguments tagged.
    keeps: bool,
    /// It receives a semver as its text.
    prints: bool,
    ints: Option<Params>,
    maps: Option<Params>,
}

impl Signature {
    pub fn of(name: &str) -> Self {
        Signature {
            result: result_type(name),
            keeps: reports_types(name) || keeps_tags(name),
            prints: prints(name),
            ints: int_params(name),
            maps: map_params(name),
        }
    }

    /// The arguments a typed call hands the function: untagged unless it reports types; an
    /// `int64` for an `int` or a typed map for a `map[string]interface {}` refused as Go
    /// refuses them. `None`: the arguments as given.
    pub fn arguments(&self, name: &str, args: &[GoValue]) -> Result<Option<Vec<GoValue>>, TemplateError> {
        if !args.iter().any(|a| tagged(a).is_some()) {
            return Ok(None);
        }
        for (i, arg) in args.iter().enumerate() {
            let Some((ty, _)) = tagged(arg) else { continue };
            let expected = match ty {
                Type::Int64 if self.ints.is_some_and(|p| p.contains(i)) => "int",
                Type::StringMap | Type::Semver if self.maps.is_some_and(|p| p.contains(i)) => "map[string]interface {}",
                _ => continue,
            };
            return Err(TemplateError::Exec(format!(
                "wrong type for value; expected {expected}; got {} (argument {} of {name})",
                tagged_name(ty),
                i + 1
            )));
        }
        if self.keeps {
            return Ok(None);
        }
        Ok(Some(args.iter().map(if self.prints { printed } else { plain }).collect()))
    }

    /// The result as a typed call gives it.
    pub fn result(&self, value: GoValue) -> GoValue {
        match (self.result, &value) {
            (Some(Type::Int64), GoValue::Int(_)) | (Some(Type::Semver), GoValue::Map(_)) => {
                tag(value, self.result.unwrap_or(Type::Int64))
            }
            (Some(ty @ (Type::Strings | Type::Ints | Type::Lists)), GoValue::List(_))
            | (Some(ty @ Type::StringMap), GoValue::Map(_)) => tag(value, ty),
            _ => value,
        }
    }
}

/// What a template's words tell: whether it can see the types the crate does not carry (it
/// names `semver`, or a function whose result is typed beside one that reports types or checks
/// an `int` or map parameter), and whether it calls a function with an `int` parameter.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uses {
    pub typed: bool,
    pub int_params: bool,
}

/// [`Uses`] of a template, from the names of the functions it mentions.
pub fn uses<'a>(functions: impl IntoIterator<Item = &'a str>) -> Uses {
    let (mut int64, mut typed, mut maps, mut semver) = (false, false, false, false);
    let (mut reports, mut ints, mut map_taken) = (false, false, false);
    for word in functions {
        match result_type(word) {
            Some(Type::Semver) => semver = true,
            Some(Type::Int64) => int64 = true,
            Some(Type::StringMap) => maps = true,
            Some(_) => typed = true,
            None => {}
        }
        reports |= reports_types(word);
        ints |= int_params(word).is_some();
        map_taken |= map_params(word).is_some();
    }
    Uses {
        typed: semver || (reports && (int64 || typed || maps)) || (ints && int64) || (map_taken && maps),
        int_params: ints,
    }
}

/// Go converts a whole float constant given to an `int` parameter (`plural "a" "b" 2.0`,
/// `trunc 1e3 .s`); the crate's constant is a float64, which the parameter refuses. Such
/// constants become integers in the tree, where the parameter is an `int`.
pub fn int_constants(list: &mut ListNode) {
    for node in &mut list.nodes {
        match node {
            Node::List(inner) => int_constants(inner),
            Node::Action(action) => pipe_constants(&mut action.pipe),
            Node::If(branch) | Node::With(branch) | Node::Range(branch) => {
                pipe_constants(&mut branch.pipe);
                int_constants(&mut branch.body);
                if let Some(other) = &mut branch.else_body {
                    int_constants(other);
                }
            }
            Node::Template(call) => {
                if let Some(pipe) = &mut call.pipe {
                    pipe_constants(pipe);
                }
            }
            Node::Define(define) => int_constants(&mut define.body),
            Node::Text(_) | Node::Break(_) | Node::Continue(_) => {}
        }
    }
}

fn pipe_constants(pipe: &mut PipeNode) {
    for command in &mut pipe.commands {
        let params = match command.args.first() {
            Some(Expr::Identifier(_, name)) => int_params(name),
            _ => None,
        };
        for (i, arg) in command.args.iter_mut().enumerate() {
            match arg {
                Expr::Number(pos, Number::Float(f))
                    if i > 0 && params.is_some_and(|p| p.contains(i - 1)) && f.fract() == 0.0 && f.abs() < 9.2e18 =>
                {
                    #[allow(clippy::cast_possible_truncation)]
                    let whole = *f as i64;
                    *arg = Expr::Number(*pos, Number::Int(whole));
                }
                Expr::Pipe(_, inner) => pipe_constants(inner),
                Expr::Chain(_, inner, _) => {
                    if let Expr::Pipe(_, inner) = &mut **inner {
                        pipe_constants(inner);
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::template::sprig::tests::{expect, expect_err};

    // Expected texts are real Go 1.19 + Sprig 3.2.3's (tests/gotemplate/runner.go).

    #[test]
    fn sprig_results_have_go_types() {
        expect(&[
            (
                r#"{{ typeOf (add 1 2) }} {{ kindOf (sub 3 1) }} {{ kindIs "int64" (max 1 2) }} {{ typeOf 3 }}"#,
                "int64 int64 true int",
            ),
            (
                r#"{{ $x := mul 2 3 }}{{ typeIs "int64" $x }} {{ $x }} {{ add $x 1 }} {{ if eq $x 6 }}six{{ end }}"#,
                "true 6 7 six",
            ),
            (r#"{{ printf "%T %T %d %s" (add1 1) (len "ab") (div 7 2) (mod 7 4) }}"#, "int64 int 3 %!s(int64=3)"),
            (r#"{{ printf "%d" 1 (int64 2) }}"#, "1%!(EXTRA int64=2)"),
            (
                r#"{{ typeOf (keys (dict "a" 1)) }} {{ typeOf (splitList "," "a,b") }} {{ typeOf (list) }}"#,
                "[]string []string []interface {}",
            ),
            (
                r#"{{ typeOf (until 2) }} {{ typeOf (chunk 1 (list 1)) }} {{ typeOf (split "," "a,b") }} {{ kindOf (split "," "a") }}"#,
                "[]int [][]interface {} map[string]string map",
            ),
            (r#"{{ printf "%#v %#v" (splitList "," "a,b") (until 2) }}"#, r#"[]string{"a", "b"} []int{0, 1}"#),
            // Landscaper's guided tour (templating/components) reads splitn's parts as fields.
            (
                r#"{{ $a := splitn "/" 2 "r/p:t" }}{{ $a._1 }} {{ typeOf $a }} {{ $a.nope }}"#,
                "p:t map[string]string <no value>",
            ),
            (
                r#"{{ printf "%#v" (regexFindAll "x" "abc" -1) }} {{ typeOf (regexFindAll "x" "a" -1) }}"#,
                "[]string(nil) []string",
            ),
            (
                r#"{{ deepEqual (add 1 0) 1 }} {{ deepEqual (add 1 0) (int64 1) }} {{ deepEqual (splitList "," "a") (list "a") }}"#,
                "false true false",
            ),
            (
                r#"{{ range $i, $k := keys (dict "a" 1 "b" 2) | sortAlpha }}{{ $i }}{{ $k }}{{ end }} {{ len (splitList "," "a,b") }}"#,
                "0a1b 2",
            ),
            (
                r#"{{ $n := add 1 2 }}{{ index (list "a" "b" "c" "d") $n }} {{ slice (list 1 2 3) (sub 2 1) }} {{ $n | toString }}"#,
                "d [2 3] 3",
            ),
        ]);
    }

    #[test]
    fn semver_is_a_version() {
        expect(&[
            (
                r#"{{ semver "1.2.3" }} {{ semver "v1.2" }} {{ semver "1.2.3-rc.1+b" | toString }}"#,
                "1.2.3 1.2.0 1.2.3-rc.1+b",
            ),
            (
                r#"{{ typeOf (semver "1.2.3") }} {{ kindOf (semver "1.2.3") }} {{ typeIsLike "semver.Version" (semver "1.0.0") }}"#,
                "*semver.Version ptr true",
            ),
            (
                r#"{{ (semver "1.2.3-rc.1+b").Major }} {{ $v := semver "v2.0" }}{{ $v.Original }} {{ $v.Minor }} {{ $v.Prerelease }}"#,
                "1 v2.0 0 ",
            ),
            (
                r#"{{ semver "1.2.3" | toJson }} {{ list (semver "1.2.3") }} {{ printf "%v|%s|%q|%d" (semver "1.2.3") (semver "1.2.3") (semver "1.2.3") (semver "1.2.3") }}"#,
                r#""1.2.3" [1.2.3] 1.2.3|1.2.3|"1.2.3"|&{1 2 3 %!d(string=) %!d(string=) %!d(string=1.2.3)}"#,
            ),
            (
                r#"{{ printf "%#v" (semver "1.2.3") }}"#,
                r#"&semver.Version{major:0x1, minor:0x2, patch:0x3, pre:"", metadata:"", original:"1.2.3"}"#,
            ),
            (r#"{{ quote (semver "1.2.3") }} {{ default "x" (semver "1.2.3") }}"#, r#""1.2.3" 1.2.3"#),
            (
                r#"{{ semver "1.2.3" | (semver "1.3.3").Compare }} {{ (semver "1.2.3").LessThan (semver "v1.2.4") }} {{ $v := semver "2.0.0" }}{{ $v.Equal (semver "2") }}"#,
                "1 true true",
            ),
            (
                r#"{{ with semver "1.2.3" }}{{ . }} {{ .Patch }}{{ end }} {{ with sub 1 1 }}x{{ else }}zero{{ end }} {{ with add 1 1 }}{{ typeOf . }}{{ end }}"#,
                "1.2.3 3 zero int64",
            ),
        ]);
        expect_err(&[
            (r#"{{ upper (semver "1.2.3") }}"#, "expected string"),
            (r#"{{ (semver "1.2.3").Nope }}"#, "can't evaluate field Nope in type *semver.Version"),
            (r#"{{ hasKey (semver "1.2.3") "Major" }}"#, "expected map[string]interface {}; got *semver.Version"),
        ]);
    }

    #[test]
    fn int_parameters_as_go_checks_them() {
        expect(&[
            (
                r#"{{ plural "one" "many" 2.0 }} {{ plural "one" "many" 1e0 }} {{ trunc 2e0 "abc" }} {{ typeOf 2.0 }}"#,
                "many one ab float64",
            ),
            (r#"{{ until 2.0 }} {{ substr 1.0 2 "abc" }} {{ plural "a" "b" (len "x") }}"#, "[0 1] b a"),
        ]);
        expect_err(&[
            (r#"{{ plural "a" "b" (int64 2) }}"#, "expected int; got int64"),
            (r#"{{ $n := add 1 1 }}{{ until $n }}"#, "expected int; got int64"),
            (r#"{{ nindent (add 1 1) "x" }}"#, "expected int; got int64"),
            (r#"{{ plural "a" "b" 1.5 }}"#, "expected int; got float64"),
            (r#"{{ keys (split "," "a,b") }}"#, "expected map[string]interface {}; got map[string]string"),
        ]);
    }
}
