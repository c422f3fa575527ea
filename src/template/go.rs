//! Go `text/template` (KOTS templates; Landscaper's GoTemplate executions) on the `gotmpl` crate,
//! a port of Go's package. The crate is the language; this module adds what it leaves to its
//! users:
//!
//! - an output budget: execution writes through [`BudgetWriter`], so a template that loops or
//!   repeats a large value stops at `--max-output-size` instead of filling memory;
//! - Go's argument checks for our functions ([`args`]): the crate hands a function an untyped
//!   slice, where Go converts and checks each argument against the function's signature and
//!   reports `wrong number of args for F: want 1 got 2`;
//! - conversions between the document model and the crate's values ([`value`]), and Go's
//!   formatting of values ([`fmt`]: type names, `%v`, floats, `printf`; the crate prints Rust's
//!   `1000000` where Go prints `1e+06`).
//!
//! The modules are layers: [`value`] at the bottom, [`fmt`] on it, [`args`], [`semver`],
//! [`typed`] and [`refs`] above, this file on top; none uses what this file defines.
//!
//! Callers compile each distinct text once per render; function maps are built once per render.

pub mod args;
pub mod check;
pub mod comments;
pub mod fmt;
pub mod pipes;
pub mod refs;
pub mod semver;
pub mod strconv;
pub mod typed;
pub mod value;

use crate::limits::{Budget, Exhausted};
pub use args::{define, fail, Args, Arity, Body};
pub use fmt::{go_float, go_type};
use gotmpl::parse::{ListNode, Node};
pub use gotmpl::{FuncMap, MissingKey, TemplateError};
use std::collections::HashMap;
use std::sync::Arc;
pub use value::{from_go, is_nil_list, list, map, map_to_go, nil_list, string, to_go, GoMap, GoValue, ValueFunc};

/// A compiled template and the steps one execution of it is charged.
pub struct Compiled {
    template: gotmpl::Template,
    steps: u64,
}

/// The name the rewritten tree ([`refs::rewrite`]) is executed under.
const REWRITTEN: &str = "render-blueprint:main";

/// Range iterations one execution may run (Go has no limit; ours keeps a template from spinning
/// without output).
const MAX_RANGE_ITERATIONS: u64 = 100_000;
/// Steps charged for each `range` an execution may run: a loop costs the render's step budget
/// whether or not its body calls a function or writes output.
const RANGE_STEPS: u64 = 1_000;
/// Nodes `{{template}}` calls may expand a template to: each call runs its definition again, so
/// a definition calling another twice, forty deep, would run for ever without writing a byte.
const MAX_EXPANSION: u64 = 100_000;

/// Compiles `source` with the given delimiters and functions (Go's builtins are always there).
///
/// The crate copies the function map into every template, and a library has hundreds of
/// functions; only the names the text mentions are handed over, so compiling a short template
/// costs what the template costs. (Functions are looked up when the template runs, so a name
/// that is not handed over fails as an unknown function would.)
pub fn compile(source: &str, (left, right): (&str, &str), funcs: &Functions) -> Result<Compiled, String> {
    let source = &*comments::normalize(source, left, right)?;
    let source = &*pipes::normalize(source, left, right);
    let mut used: FuncMap = source
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter_map(|word| funcs.get(word, false))
        .map(|(name, f)| (name.clone(), f.clone()))
        .collect();
    // Parsed once, by the crate's parser; what the crate's `Template::parse` adds to it for an
    // unnamed template is Go's refusal of a name defined twice in one text.
    let (mut tree, defines) = gotmpl::parse::Parser::with_name(None, source, left, right)
        .and_then(gotmpl::parse::Parser::parse)
        .map_err(|err| message(&err))?;
    twice_defined(source, &defines).map_err(|err| message(&err))?;
    let bodies: Vec<&ListNode> = defines.iter().map(|d| &d.body).collect();
    check::check(&tree, &bodies, &|name| funcs.get(name, false).is_some()).map_err(|err| message(&err))?;
    let steps = if source.contains("range") || source.contains("template") || source.contains("block") {
        let defines: HashMap<&str, &ListNode> = defines.iter().map(|d| (d.name.as_str(), &d.body)).collect();
        let cost = cost(&tree, &defines, &mut Vec::new(), 0)?;
        1 + cost.ranges.saturating_mul(RANGE_STEPS)
    } else {
        1
    };
    // Executed from the rewritten tree: printed values are measured first, and reads of maps
    // see their changes when the template may change one.
    let changes = refs::may_change(source);
    // A typed template's crate reads take the tags off: the same rewrite.
    let typed::Uses { typed, int_params } = typed::uses(used.keys().map(String::as_str));
    if typed {
        for (name, f) in &mut used {
            if let Some((_, typed)) = funcs.get(name, true) {
                f.clone_from(typed);
            }
        }
    }
    if int_params {
        typed::int_constants(&mut tree);
    }
    let rewritten = changes || typed;
    refs::rewrite(&mut tree, rewritten);
    let mut internal = used;
    let get: ValueFunc = Arc::new(refs::get);
    let resolve: ValueFunc = Arc::new(refs::read);
    let printable: ValueFunc = Arc::new(refs::printable);
    internal.insert(refs::GET.into(), get);
    internal.insert(refs::RESOLVE.into(), resolve);
    let method: ValueFunc = Arc::new(refs::method);
    internal.insert(refs::METHOD.into(), method);
    let with: ValueFunc = Arc::new(refs::with);
    internal.insert(refs::WITH.into(), with);
    internal.insert(refs::PRINTABLE.into(), printable);
    let mut template = gotmpl::Template::new("")
        .delims(left, right)
        .funcs(internal)
        .max_range_iters(MAX_RANGE_ITERATIONS)
        .add_parse_tree(REWRITTEN, tree);
    let mut added = std::collections::HashSet::new();
    for mut define in defines {
        // As Go: an empty definition does not replace a non-empty one of the same name.
        if define.body.is_empty_tree() && added.contains(define.name.as_str()) {
            continue;
        }
        added.insert(define.name.to_string());
        if int_params {
            typed::int_constants(&mut define.body);
        }
        refs::rewrite(&mut define.body, rewritten);
        template = template.add_parse_tree(&define.name, define.body);
    }
    Ok(Compiled { template, steps })
}

/// Go's `multiple definition of template` for a name given two non-empty bodies in one text (an
/// empty body beside a non-empty one is dropped, not refused), at the second body, as the crate's
/// `Template::parse` reports it.
fn twice_defined(source: &str, defines: &[gotmpl::parse::DefineNode]) -> Result<(), TemplateError> {
    let mut defined = std::collections::HashSet::new();
    for define in defines.iter().filter(|d| !d.body.is_empty_tree()) {
        if !defined.insert(define.name.as_str()) {
            let start = source.get(..define.pos.offset).map_or(0, |before| before.rfind('\n').map_or(0, |i| i + 1));
            let col = source.get(start..define.pos.offset).map_or(0, |text| text.chars().count()) + 1;
            return Err(TemplateError::Parse {
                name: None,
                line: define.pos.line,
                col,
                message: format!("multiple definition of template {:?}", define.name.as_str()),
            });
        }
    }
    Ok(())
}

/// What executing a tree may cost: its nodes and `range`s, `{{template}}` calls expanded.
#[derive(Default)]
struct Cost {
    nodes: u64,
    ranges: u64,
}

fn cost<'a>(
    list: &'a ListNode,
    defines: &HashMap<&'a str, &'a ListNode>,
    calling: &mut Vec<&'a str>,
    depth: usize,
) -> Result<Cost, String> {
    let mut total = Cost::default();
    let mut add = |part: Cost| -> Result<(), String> {
        total.nodes = total.nodes.saturating_add(part.nodes);
        total.ranges = total.ranges.saturating_add(part.ranges);
        if total.nodes > MAX_EXPANSION {
            return Err(format!(
                "its {{{{template}}}} calls expand to more than {MAX_EXPANSION} actions: call each definition fewer times"
            ));
        }
        Ok(())
    };
    if depth > crate::limits::MAX_DEPTH {
        return Err("templates nest too deeply".into());
    }
    for node in &list.nodes {
        add(Cost { nodes: 1, ranges: 0 })?;
        match node {
            Node::List(inner) => add(cost(inner, defines, calling, depth + 1)?)?,
            Node::If(branch) | Node::With(branch) | Node::Range(branch) => {
                if matches!(node, Node::Range(_)) {
                    add(Cost { nodes: 0, ranges: 1 })?;
                }
                add(cost(&branch.body, defines, calling, depth + 1)?)?;
                if let Some(other) = &branch.else_body {
                    add(cost(other, defines, calling, depth + 1)?)?;
                }
            }
            Node::Template(call) => {
                let name = call.name.as_str();
                if calling.contains(&name) {
                    return Err(format!("template {name:?} calls itself: recursive templates are not supported"));
                }
                if let Some((defined, body)) = defines.get_key_value(name) {
                    calling.push(defined);
                    add(cost(body, defines, calling, depth + 1)?)?;
                    calling.pop();
                }
            }
            _ => {}
        }
    }
    Ok(total)
}

impl Compiled {
    /// Executes over `data`, charging every byte written to `budget`.
    pub fn execute(&self, data: &GoValue, budget: &Budget) -> Result<String, String> {
        budget.charge_steps(self.steps).map_err(|e| e.to_string())?;
        let mut out = BudgetWriter { out: String::new(), budget, exhausted: None };
        let limit = budget.limits().max_output_bytes;
        let room = limit.saturating_sub(budget.used().0);
        let executed = refs::scope(room, limit, || self.template.execute_template_fmt(&mut out, REWRITTEN, data));
        match executed {
            Ok(()) => Ok(out.out),
            Err(err) => Err(match out.exhausted {
                Some(exhausted) => exhausted.to_string(),
                None => message(&err),
            }),
        }
    }
}

/// The functions a template may call: each in the form an untyped and a typed template
/// ([`typed`]) runs it, and those a caller adds unchanged for every template (`include`).
/// Cloning is cheap: the tables are shared. The typed forms are built when a typed template is
/// first compiled: most renders have none.
#[derive(Clone, Default)]
pub struct Functions {
    plain: Arc<FuncMap>,
    typed: Option<Arc<TypedForms>>,
    added: FuncMap,
}

/// What the typed forms are built from, and once built, the forms.
struct TypedForms {
    funcs: FuncMap,
    budget: Arc<Budget>,
    built: std::sync::OnceLock<FuncMap>,
}

impl Functions {
    /// Adds `f` as `name` for untyped and typed templates alike, over a function of that name.
    pub fn insert(&mut self, name: String, f: ValueFunc) {
        self.added.insert(name, f);
    }

    /// The function named `name`, in the form a typed or an untyped template runs it.
    pub fn get(&self, name: &str, typed: bool) -> Option<(&String, &ValueFunc)> {
        let table = match &self.typed {
            Some(forms) if typed => forms.built.get_or_init(|| {
                forms
                    .funcs
                    .iter()
                    .map(|(name, f)| (name.clone(), charge(name, f.clone(), &forms.budget, true)))
                    .collect()
            }),
            _ => &self.plain,
        };
        self.added.get_key_value(name).or_else(|| table.get_key_value(name))
    }

    /// The names of all the functions.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.plain.keys().filter(|name| !self.added.contains_key(*name)).chain(self.added.keys())
    }
}

/// Functions as they are, for templates of any kind (uncharged: tests and nested renders).
impl From<FuncMap> for Functions {
    fn from(funcs: FuncMap) -> Self {
        Functions { plain: Arc::new(funcs), typed: None, added: FuncMap::new() }
    }
}

/// The same functions, each call charged one step of `budget` and the size of what it returns:
/// a loop that calls functions without writing output still ends at `--max-steps` or
/// `--max-output-size`. A typed template's calls also take the Go-type tags off the arguments
/// and put them on the result ([`typed::Signature`]).
pub fn charged(funcs: FuncMap, budget: &Arc<Budget>) -> Functions {
    let plain = funcs.iter().map(|(name, f)| (name.clone(), charge(name, f.clone(), budget, false))).collect();
    let typed = TypedForms { funcs, budget: budget.clone(), built: std::sync::OnceLock::new() };
    Functions { plain: Arc::new(plain), typed: Some(Arc::new(typed)), added: FuncMap::new() }
}

/// `f` charged to `budget`, as [`charged`] says.
fn charge(name: &str, f: ValueFunc, budget: &Arc<Budget>, typed: bool) -> ValueFunc {
    let budget = Arc::clone(budget);
    let (factor, label) = (text_factor(name), name.to_string());
    let signature = typed::Signature::of(name);
    Arc::new(move |args: &[GoValue]| {
        budget.charge_steps(1).map_err(|e| TemplateError::Exec(e.to_string()))?;
        // A typed execution's values carry their Go types.
        let untagged: Vec<GoValue>;
        let args = match typed.then(|| signature.arguments(&label, args)).transpose()?.flatten() {
            Some(plain) => {
                untagged = plain;
                &untagged[..]
            }
            None => args,
        };
        // Maps changed in this execution are read at their newest version.
        let resolved: Vec<GoValue>;
        let args = if refs::any_changed() {
            resolved = args.iter().map(refs::resolve).collect::<Result<_, _>>()?;
            &resolved[..]
        } else {
            args
        };
        // A function that writes its arguments' text must fit before it builds it: what
        // printing them writes (shared parts as often as printed), times what escaping
        // may multiply it by.
        if let Some(factor) = factor {
            // printf with only plain verbs writes its arguments as they are.
            let factor = match args.first() {
                Some(GoValue::String(format)) if label == "printf" && !format.contains(['q', 'x', 'X', '#', 'U']) => 1,
                _ => factor,
            };
            let mut size = 0u64;
            for arg in args {
                size = size.saturating_add(refs::measure(arg)?.size);
            }
            let exhausted = |e: crate::limits::Exhausted| TemplateError::Exec(format!("{label}: {e}"));
            budget.output_fits(size.saturating_mul(factor)).map_err(exhausted)?;
        }
        let result = f(args)?;
        let result = if typed { signature.result(result) } else { result };
        // What a call builds counts as produced output, written or not (`$x := repeat …`),
        // and may not nest deeper than values may.
        let size = match &result {
            GoValue::String(s) => s.len(),
            GoValue::List(items) => items.len().saturating_mul(8),
            GoValue::Map(map) => map.len().saturating_mul(16),
            _ => 0,
        };
        budget.charge_output(size).map_err(|e| TemplateError::Exec(e.to_string()))?;
        if matches!(result, GoValue::List(_) | GoValue::Map(_)) {
            refs::measure(&result)?;
        }
        Ok(result)
    })
}

/// For a function whose result is its arguments' text (printed, joined, quoted, encoded), how
/// many bytes of result one printed byte may become at most.
fn text_factor(name: &str) -> Option<u64> {
    match name {
        "print" | "println" | "cat" | "join" | "toString" | "toStrings" | "squote" | "nospace" | "upper" | "lower"
        | "title" | "untitle" | "trim" | "indent" | "nindent" | "replace" | "wrap" | "wrapWith" | "b64enc"
        | "b32enc" | "toYaml" | "splitList" | "sortAlpha" => Some(2),
        // Escapes: `\u00ad` and `&#34;` are six and five bytes for one or two.
        "printf" | "quote" | "toJson" | "mustToJson" | "toPrettyJson" | "mustToPrettyJson" | "toRawJson"
        | "mustToRawJson" | "html" | "js" | "urlquery" => Some(6),
        _ => None,
    }
}

/// The crate's error text, without the `execution error: ` it puts before our functions' own
/// messages.
pub fn message(err: &TemplateError) -> String {
    match err {
        TemplateError::Exec(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Output that stops at the render's budget.
struct BudgetWriter<'a> {
    out: String,
    budget: &'a Budget,
    exhausted: Option<Exhausted>,
}

impl std::fmt::Write for BudgetWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        match self.budget.charge_output(s.len()) {
            Ok(()) => {
                self.out.push_str(s);
                Ok(())
            }
            Err(exhausted) => {
                self.exhausted = Some(exhausted);
                Err(std::fmt::Error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str, delims: (&str, &str), funcs: &FuncMap) -> Result<String, String> {
        compile(source, delims, &funcs.clone().into())?.execute(&GoValue::Nil, &Budget::default())
    }

    #[test]
    fn go_floats() {
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(123_456.0), "123456");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5e21), "-2.5e+21");
        assert_eq!(go_float(1_234_567.0), "1.234567e+06");
        assert_eq!(go_float(3.0), "3");
    }

    #[test]
    fn delimiters_and_functions() {
        let mut funcs = FuncMap::new();
        let upper: ValueFunc = Arc::new(|args: &[GoValue]| {
            let args = Args::exact("Upper", args, 1)?;
            Ok(GoValue::String(args.string(0)?.to_uppercase().into()))
        });
        funcs.insert("Upper".into(), upper);
        assert_eq!(run(r#"a repl{{ "x" | Upper }} {{ b }}"#, ("repl{{", "}}"), &funcs), Ok("a X {{ b }}".into()));
        assert_eq!(run(r#"{{repl if true }}yes{{repl end }}"#, ("{{repl", "}}"), &funcs), Ok("yes".into()));
        let err = run(r#"repl{{ Upper "a" "b" }}"#, ("repl{{", "}}"), &funcs).err().unwrap_or_default();
        assert!(err.contains("wrong number of args for Upper: want 1 got 2"), "{err}");
        let err = run(r#"repl{{ Upper 1 }}"#, ("repl{{", "}}"), &funcs).err().unwrap_or_default();
        assert!(err.contains("expected string; got int"), "{err}");
        let err = run(r#"repl{{ Nope 1 }}"#, ("repl{{", "}}"), &funcs).err().unwrap_or_default();
        assert!(err.contains("Nope"), "{err}");
    }

    #[test]
    fn a_name_defined_twice_is_refused_as_the_crate_refuses_it() {
        for (refused, source) in [
            (true, "{{define \"a\"}}x{{end}}{{define \"a\"}}y{{end}}"),
            (true, "ü{{define \"a\"}}x{{end}}\n  é {{define \"b\"}}{{end}}{{define \"a\"}}y{{end}}"),
            (false, "{{define \"a\"}}{{end}}{{define \"a\"}}y{{end}}{{define \"a\"}}{{end}}"),
        ] {
            let crate_parse = gotmpl::Template::new("").parse(source).err().map(|err| message(&err));
            let ours = compile(source, ("{{", "}}"), &Functions::default()).err();
            assert_eq!(ours, crate_parse, "{source}");
            assert_eq!(ours.is_some(), refused, "{source}");
        }
    }

    #[test]
    fn output_is_budgeted() {
        let budget = Budget::new(crate::limits::Limits { max_output_bytes: 1000, ..Default::default() });
        let compiled = compile(r#"{{ range 100000 }}xxxxxxxxxx{{ end }}"#, ("{{", "}}"), &Functions::default());
        let err = compiled.and_then(|c| c.execute(&GoValue::Nil, &budget)).err().unwrap_or_default();
        assert!(err.contains("--max-output-size"), "{err}");
    }
}
