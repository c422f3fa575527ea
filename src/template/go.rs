//! Go `text/template` (KOTS templates; Landscaper's GoTemplate executions). The `gotmpl` crate,
//! a port of Go's package, parses; the engine executes over its own values, which carry Go's
//! types ([`value`]): Sprig's `int64` results, typed slices and maps, maps shared by reference,
//! a `*semver.Version` with its methods.
//!
//! - [`exec`] walks the parse tree: an output budget (a template that loops or repeats a large
//!   value stops at `--max-output-size`), a step per function call, a bound on `range`;
//! - [`args`]: each function is registered once with its arity and reads its arguments as its
//!   Go parameter types, with Go's errors (`wrong number of args for F: want 1 got 2`);
//! - [`builtins`]: Go's builtins; [`fmt`]: Go's formatting of values (type names, `%v`, floats,
//!   `printf`); [`check`]: what Go's parser refuses and the crate's leaves to execution.
//!
//! The modules are layers: [`semver`] and [`value`] at the bottom, [`fmt`] on them, [`args`],
//! [`builtins`] and [`exec`] above, this file on top; none uses what this file defines.
//!
//! Callers compile each distinct text once per render; function tables are built once per render.

pub mod args;
pub mod builtins;
pub mod check;
pub mod comments;
pub mod exec;
pub mod fmt;
pub mod pipes;
pub mod semver;
pub mod strconv;
pub mod value;

use crate::limits::Budget;
pub use args::{define, define_closure, fail, Args, Arity, Body, Context, Cost, FuncMap, Function, Signature};
pub use exec::MAX_RANGE_ITERATIONS;
pub use fmt::{go_float, go_type};
use gotmpl::parse::{ListNode, Node};
pub use gotmpl::TemplateError;
use std::collections::HashMap;
use std::sync::Arc;
pub use value::{
    from_go, list, map, map_to_go, nil_list, string, to_go, typed_list, Elem, GoMap, GoValue, List, MapRef, Semver,
};

/// A compiled template: its tree, its definitions, the functions it may call, and the steps one
/// execution of it is charged.
pub struct Compiled {
    tree: ListNode,
    defines: HashMap<String, ListNode>,
    funcs: Functions,
    steps: u64,
    missing_zero: bool,
}

impl exec::Program for Compiled {
    fn define(&self, name: &str) -> Option<&ListNode> {
        self.defines.get(name)
    }

    fn function(&self, name: &str) -> Option<&Function> {
        self.funcs.get(name)
    }

    fn missing_zero(&self) -> bool {
        self.missing_zero
    }
}

/// Steps charged for each `range` an execution may run: a loop costs the render's step budget
/// whether or not its body calls a function or writes output.
const RANGE_STEPS: u64 = 1_000;
/// Nodes `{{template}}` calls may expand a template to: each call runs its definition again, so
/// a definition calling another twice, forty deep, would run for ever without writing a byte.
const MAX_EXPANSION: u64 = 100_000;

/// Compiles `source` with the given delimiters and functions (Go's builtins are always there).
pub fn compile(source: &str, (left, right): (&str, &str), funcs: &Functions) -> Result<Compiled, Error> {
    let source = &*comments::normalize(source, left, right).map_err(Error::from)?;
    let source = &*pipes::normalize(source, left, right);
    // Parsed once, by the crate's parser; what the crate's `Template::parse` adds to it for an
    // unnamed template is Go's refusal of a name defined twice in one text.
    let (tree, defines) = gotmpl::parse::Parser::with_name(None, source, left, right)
        .and_then(gotmpl::parse::Parser::parse)
        .map_err(|err| Error::of(&err))?;
    twice_defined(source, &defines).map_err(|err| Error::of(&err))?;
    let bodies: Vec<&ListNode> = defines.iter().map(|d| &d.body).collect();
    check::check(&tree, &bodies, &|name| exec::LAZY.contains(&name) || funcs.get(name).is_some())
        .map_err(|err| Error::of(&err))?;
    let steps = if source.contains("range") || source.contains("template") || source.contains("block") {
        let defines: HashMap<&str, &ListNode> = defines.iter().map(|d| (d.name.as_str(), &d.body)).collect();
        let cost = cost(&tree, &defines, &mut Vec::new(), 0).map_err(Error::from)?;
        1 + cost.ranges.saturating_mul(RANGE_STEPS)
    } else {
        1
    };
    let mut bodies: HashMap<String, ListNode> = HashMap::new();
    for define in defines {
        // As Go: an empty definition does not replace a non-empty one of the same name.
        if define.body.is_empty_tree() && bodies.contains_key(define.name.as_str()) {
            continue;
        }
        bodies.insert(define.name.to_string(), define.body);
    }
    Ok(Compiled { tree, defines: bodies, funcs: funcs.clone(), steps, missing_zero: false })
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
struct Expansion {
    nodes: u64,
    ranges: u64,
}

fn cost<'a>(
    list: &'a ListNode,
    defines: &HashMap<&'a str, &'a ListNode>,
    calling: &mut Vec<&'a str>,
    depth: usize,
) -> Result<Expansion, String> {
    let mut total = Expansion::default();
    let mut add = |part: Expansion| -> Result<(), String> {
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
        add(Expansion { nodes: 1, ranges: 0 })?;
        match node {
            Node::List(inner) => add(cost(inner, defines, calling, depth + 1)?)?,
            Node::If(branch) | Node::With(branch) | Node::Range(branch) => {
                if matches!(node, Node::Range(_)) {
                    add(Expansion { nodes: 0, ranges: 1 })?;
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
    /// Go's `missingkey=zero` (Landscaper's option): a missing key of a map reads as the zero
    /// value of the map's element type (nil, or `""` in a `map[string]string`).
    pub fn missing_zero(mut self) -> Self {
        self.missing_zero = true;
        self
    }

    /// Executes over `data`, charging every byte written and every function call to `budget`.
    pub fn execute(&self, data: &GoValue, budget: &Budget) -> Result<String, Error> {
        self.execute_in(data, args::Context { budget, nesting: 0 })
    }

    /// Executes inside another execution (a function that runs a template: `include`), whose
    /// context the call received.
    pub fn execute_in(&self, data: &GoValue, context: args::Context<'_>) -> Result<String, Error> {
        let budget = context.budget;
        budget.charge_steps(self.steps).map_err(|e| Error::from(e.to_string()))?;
        exec::Exec::new(self, budget, context.nesting).run(&self.tree, data).map_err(|(err, exhausted)| match exhausted
        {
            Some(exhausted) => Error::from(exhausted.to_string()),
            None => Error::of(&err),
        })
    }
}

/// The functions a template may call beside Go's builtins: a table shared by every template of
/// a render, and those a caller adds for some templates (`include`, `readFile`). Cloning is
/// cheap: the table is shared.
#[derive(Clone, Default)]
pub struct Functions {
    table: Arc<FuncMap>,
    added: FuncMap,
}

impl Functions {
    /// Adds `f` as `name`, over a function of that name.
    pub fn insert(&mut self, name: String, f: Function) {
        self.added.insert(name, f);
    }

    /// The function named `name`: an added one, the table's, or a builtin.
    pub fn get(&self, name: &str) -> Option<&Function> {
        self.added.get(name).or_else(|| self.table.get(name)).or_else(|| builtins::builtins().get(name))
    }

    /// The names of all the functions, Go's builtins among them.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        let builtins = builtins::builtins().keys().filter(|name| !self.table.contains_key(*name));
        self.table.keys().filter(|name| !self.added.contains_key(*name)).chain(self.added.keys()).chain(builtins)
    }
}

impl From<FuncMap> for Functions {
    fn from(funcs: FuncMap) -> Self {
        Functions { table: Arc::new(funcs), added: FuncMap::new() }
    }
}

/// A template's error: its message, and the line and column of the text it is at when the parser
/// gives them (a parse error; execution errors have none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    pub at: Option<(usize, usize)>,
}

impl Error {
    /// The crate's error as ours.
    pub fn of(err: &TemplateError) -> Self {
        let at = match err {
            TemplateError::Parse { line, col, .. } | TemplateError::Lex { line, col, .. } => Some((*line, *col)),
            _ => None,
        };
        Error { message: message(err), at }
    }

    /// The message, and under it the template line it is at with a caret under the column.
    pub fn render(&self, source: &str) -> String {
        let Some((line, column)) = self.at else { return self.message.clone() };
        match source.lines().nth(line.saturating_sub(1)).filter(|text| !text.trim().is_empty()) {
            Some(text) => {
                let text = text.replace('\t', " ");
                format!("{}\n | {text}\n | {}^", self.message, ".".repeat(column.saturating_sub(1)))
            }
            None => self.message.clone(),
        }
    }
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error { message, at: None }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Callers that report a template's error as text.
impl From<Error> for String {
    fn from(err: Error) -> Self {
        err.message
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str, delims: (&str, &str), funcs: &FuncMap) -> Result<String, String> {
        Ok(compile(source, delims, &funcs.clone().into())?.execute(&GoValue::Nil, &Budget::default())?)
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
        define(&mut funcs, "Upper", Arity::Exact(1), |args| Ok(GoValue::String(args.string(0)?.to_uppercase().into())));
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
            let ours = compile(source, ("{{", "}}"), &Functions::default()).err().map(String::from);
            assert_eq!(ours, crate_parse, "{source}");
            assert_eq!(ours.is_some(), refused, "{source}");
        }
    }

    #[test]
    fn output_is_budgeted() {
        let budget = Budget::new(crate::limits::Limits { max_output_bytes: 1000, ..Default::default() });
        let compiled = compile(r#"{{ range 100000 }}xxxxxxxxxx{{ end }}"#, ("{{", "}}"), &Functions::default());
        let err = compiled.and_then(|c| c.execute(&GoValue::Nil, &budget)).err().map(String::from).unwrap_or_default();
        assert!(err.contains("--max-output-size"), "{err}");
    }
}
