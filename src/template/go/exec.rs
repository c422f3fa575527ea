//! The executor: Go's `text/template` execution over the gotmpl crate's parse tree, on the
//! engine's own values ([`value`](super::value)). The crate's parser is Go's; its executor reads
//! the crate's values, which have one integer, one list and one map type, no shared maps and no
//! methods, so the tree is walked here: pipelines, variables, `if`/`with`/`range` (with `break`
//! and `continue`), `template` calls, fields of maps and of a `*semver.Version`, its methods,
//! and function calls with Go's argument checks.
//!
//! An execution is bounded: every function call is charged a step and what it returns; a value
//! is measured before it is printed or handed to a function that prints it (values built of
//! shared parts print far larger than they are); `range` runs at most
//! [`MAX_RANGE_ITERATIONS`] times; output stops at the budget ([`Output`]).

use super::args::{fail, Args, Context, Cost, Function, ESCAPES};
use super::fmt::{go_type, sprint_value};
use super::semver::Version;
use super::value::{entry_bytes, generation, list_bytes, GoValue, List, Semver, MAX_VALUE_DEPTH};
use crate::limits::{Budget, Exhausted, Resource};
use gotmpl::parse::{BranchNode, CommandNode, Expr, ListNode, Node, Number, PipeNode, SmolStr, TemplateNode};
use gotmpl::TemplateError;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

/// Range iterations one execution may run (Go has no limit; ours keeps a template from spinning
/// without output).
pub const MAX_RANGE_ITERATIONS: u64 = 100_000;

/// Go's builtins that evaluate their arguments only as far as they need: the executor runs them.
pub const LAZY: [&str; 2] = ["and", "or"];

/// Nesting of control structures and `template` calls one execution may reach.
const MAX_EXEC_DEPTH: usize = 200;

/// What the executor needs of a compiled template: its definitions and its functions.
pub trait Program {
    fn define(&self, name: &str) -> Option<&ListNode>;
    fn function(&self, name: &str) -> Option<&Function>;
    /// Go's `missingkey=zero`.
    fn missing_zero(&self) -> bool;
}

/// Output that stops at the render's budget.
struct Output<'a> {
    out: String,
    budget: &'a Budget,
    exhausted: Option<Exhausted>,
}

impl<'a> Output<'a> {
    fn new(budget: &'a Budget) -> Self {
        Output { out: String::new(), budget, exhausted: None }
    }

    fn write(&mut self, s: &str) -> Result<(), Flow> {
        match self.budget.charge_output(s.len()) {
            Ok(()) => {
                self.out.push_str(s);
                Ok(())
            }
            Err(exhausted) => {
                self.exhausted = Some(exhausted);
                Err(Flow::Err(TemplateError::Write))
            }
        }
    }
}

/// How a walk ends early.
enum Flow {
    Err(TemplateError),
    Break,
    Continue,
}

impl From<TemplateError> for Flow {
    fn from(err: TemplateError) -> Self {
        Flow::Err(err)
    }
}

type Walk<T> = Result<T, Flow>;

/// One execution's state.
pub struct Exec<'p, 'o> {
    program: &'p dyn Program,
    budget: &'o Budget,
    out: Output<'o>,
    /// Variables in scope, innermost last; a scope ends by truncating to its start.
    vars: Vec<(SmolStr, GoValue)>,
    /// Where the innermost scope's variables start in `vars`.
    scope: usize,
    depth: usize,
    ranges_left: u64,
    /// Bytes a printed value may take: the output budget left when the execution started.
    printable: u64,
    measures: Measures,
    /// How many executions enclose this one (`include`).
    nesting: usize,
    /// Nodes walked (and range iterations begun) not yet charged to the step budget.
    unpaid: u64,
}

/// Nodes walked are charged to the step budget this many at a time.
const NODES_PER_CHARGE: u64 = 256;

/// What printing a value writes (shared parts counted each time they are printed) and how deep
/// it nests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Measure {
    size: u64,
    depth: usize,
}

/// Measures of lists and maps, remembered (with the value, so its address stays its own) while
/// no map changes: a value built of shared parts (`$x = list $x $x` thirty times) is measured in
/// time proportional to its parts, not to its printed size.
#[derive(Default)]
struct Measures {
    known: HashMap<usize, (GoValue, Measure)>,
    generation: u64,
}

impl<'p, 'o> Exec<'p, 'o> {
    pub fn new(program: &'p dyn Program, budget: &'o Budget, nesting: usize) -> Self {
        let printable = budget.limits().max_output_bytes.saturating_sub(budget.used().0);
        Exec {
            program,
            budget,
            out: Output::new(budget),
            vars: Vec::new(),
            scope: 0,
            depth: 0,
            ranges_left: MAX_RANGE_ITERATIONS,
            printable,
            measures: Measures::default(),
            nesting,
            unpaid: 0,
        }
    }

    /// Runs `tree` with `data` as dot and `$`; the output, or the error and where output stopped.
    pub fn run(mut self, tree: &ListNode, data: &GoValue) -> Result<String, (TemplateError, Option<Exhausted>)> {
        self.vars.push(("$".into(), data.clone()));
        match self.walk(tree, data) {
            Ok(()) => Ok(self.out.out),
            Err(flow) => {
                let err = match flow {
                    Flow::Err(err) => err,
                    Flow::Break => TemplateError::Exec("unexpected break outside of range".into()),
                    Flow::Continue => TemplateError::Exec("unexpected continue outside of range".into()),
                };
                Err((err, self.out.exhausted))
            }
        }
    }

    fn walk(&mut self, list: &ListNode, dot: &GoValue) -> Walk<()> {
        for node in &list.nodes {
            self.node(node, dot)?;
        }
        Ok(())
    }

    /// Counts a node walked or an iteration begun: each is a step of the budget, so a loop whose
    /// body does much without calling a function still ends at `--max-steps`.
    fn tick(&mut self) -> Walk<()> {
        self.unpaid += 1;
        if self.unpaid >= NODES_PER_CHARGE {
            self.unpaid = 0;
            self.budget.charge_steps(NODES_PER_CHARGE).map_err(|e| TemplateError::Exec(e.to_string()))?;
        }
        Ok(())
    }

    fn node(&mut self, node: &Node, dot: &GoValue) -> Walk<()> {
        self.tick()?;
        match node {
            Node::Text(text) => self.out.write(&text.text),
            Node::Action(action) => {
                let value = self.pipeline(dot, &action.pipe)?;
                if action.pipe.decl.is_empty() {
                    self.print(&value)?;
                }
                Ok(())
            }
            Node::If(branch) => self.nested(|exec| exec.branch(branch, dot, false)),
            Node::With(branch) => self.nested(|exec| exec.branch(branch, dot, true)),
            Node::Range(branch) => self.nested(|exec| exec.range(branch, dot)),
            Node::Template(call) => self.nested(|exec| exec.template(call, dot)),
            Node::Define(_) => Ok(()),
            Node::List(list) => self.walk(list, dot),
            Node::Break(_) => Err(Flow::Break),
            Node::Continue(_) => Err(Flow::Continue),
        }
    }

    /// Runs `f` one level deeper, its variables ending with it.
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Walk<()>) -> Walk<()> {
        if self.depth >= MAX_EXEC_DEPTH {
            return Err(TemplateError::RecursionLimit.into());
        }
        self.depth += 1;
        let result = self.scoped(f);
        self.depth -= 1;
        result
    }

    /// Runs `f` in a scope of its own: the variables it declares end with it.
    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let (mark, outer) = (self.vars.len(), self.scope);
        self.scope = mark;
        let result = f(self);
        self.vars.truncate(mark);
        self.scope = outer;
        result
    }

    /// Writes a value as Go's template does, once it is known to fit in the output budget (a
    /// value's text is built whole before it is written).
    fn print(&mut self, value: &GoValue) -> Walk<()> {
        let size = self.measure(value)?.size;
        if size > self.printable {
            let limit = self.budget.limits().max_output_bytes;
            return Err(TemplateError::Exec(format!(
                "printing a value of about {size} bytes: {}",
                Exhausted { resource: Resource::Output, limit }
            ))
            .into());
        }
        match value {
            GoValue::Nil => self.out.write("<no value>"),
            GoValue::String(s) => self.out.write(s),
            other => {
                let text = sprint_value(other);
                self.out.write(&text)
            }
        }
    }

    fn branch(&mut self, branch: &BranchNode, dot: &GoValue, with: bool) -> Walk<()> {
        let value = self.pipeline(dot, &branch.pipe)?;
        if value.is_truthy() {
            self.walk(&branch.body, if with { &value } else { dot })
        } else if let Some(other) = &branch.else_body {
            self.walk(other, dot)
        } else {
            Ok(())
        }
    }

    fn range(&mut self, branch: &BranchNode, dot: &GoValue) -> Walk<()> {
        let value = self.pipeline_value(dot, &branch.pipe)?;
        let items = match &value {
            GoValue::List(items) => Items::List(items.clone()),
            // Keys in Go's order (sorted); the entries as they are when the range starts, copied
            // (and charged) before the first round.
            GoValue::Map(map) => {
                let entries: Vec<_> = map.read().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let steps = u64::try_from(entries.len() / 16).unwrap_or(u64::MAX);
                self.budget.charge_steps(steps).map_err(|e| TemplateError::Exec(e.to_string()))?;
                Items::Map(entries)
            }
            GoValue::Int(n) | GoValue::Int64(n) => {
                self.one_variable(branch, &value)?;
                Items::Count((*n).max(0).unsigned_abs(), false)
            }
            GoValue::Uint(n) => {
                self.one_variable(branch, &value)?;
                Items::Count(*n, true)
            }
            GoValue::Nil => Items::Count(0, false),
            other => return Err(TemplateError::NotIterable(go_type(other).to_string()).into()),
        };
        // As Go: the range's variables hold the ranged value until an iteration sets them (an
        // `else` reads them so).
        for name in &branch.pipe.decl {
            self.declare(name, value.clone(), branch.pipe.is_assign);
        }
        let len = items.len();
        if len == 0 {
            if let Some(other) = &branch.else_body {
                self.walk(other, dot)?;
            }
            return Ok(());
        }
        for i in 0..len {
            if self.ranges_left == 0 {
                return Err(TemplateError::RangeIterLimit.into());
            }
            self.ranges_left -= 1;
            self.tick()?;
            let (key, item) = items.get(i);
            let walked = self.scoped(|exec| {
                match branch.pipe.decl.as_slice() {
                    [] => {}
                    // Go sets the variables on top of the stack: the range's own after `:=`; after
                    // `=`, whichever were declared last (`{{$x := 0}}{{$y := 0}}{{range $x = …}}`
                    // sets `$y`), as Go 1.19's `setTopVar` does.
                    decl if branch.pipe.is_assign => {
                        let top = exec.vars.len();
                        if let Some(slot) = top.checked_sub(1).and_then(|i| exec.vars.get_mut(i)) {
                            slot.1 = item.clone();
                        }
                        if decl.len() > 1 {
                            if let Some(slot) = top.checked_sub(2).and_then(|i| exec.vars.get_mut(i)) {
                                slot.1 = key;
                            }
                        }
                    }
                    [one] => exec.declare(one, item.clone(), false),
                    [first, second, ..] => {
                        exec.declare(first, key, false);
                        exec.declare(second, item.clone(), false);
                    }
                }
                exec.walk(&branch.body, &item)
            });
            match walked {
                Ok(()) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    fn one_variable(&self, branch: &BranchNode, value: &GoValue) -> Walk<()> {
        if branch.pipe.decl.len() > 1 {
            return Err(TemplateError::Exec(format!(
                "can't use {} to iterate over more than one variable",
                sprint_value(value)
            ))
            .into());
        }
        Ok(())
    }

    fn template(&mut self, call: &TemplateNode, dot: &GoValue) -> Walk<()> {
        // Without a pipeline the template runs with nil data, as Go's does.
        let value = match &call.pipe {
            Some(pipe) => self.pipeline(dot, pipe)?,
            None => GoValue::Nil,
        };
        let program = self.program;
        let body = program
            .define(call.name.as_str())
            .ok_or_else(|| TemplateError::UndefinedTemplate(call.name.to_string()))?;
        // A definition sees only its own `$`.
        let (outer, outer_scope) = (std::mem::take(&mut self.vars), self.scope);
        self.vars.push(("$".into(), value.clone()));
        self.scope = 0;
        let walked = self.walk(body, &value);
        self.vars = outer;
        self.scope = outer_scope;
        walked
    }

    /// `$name := value` declares in the innermost scope (a name declared there again is the same
    /// variable: Go's would shadow it, to the same effect); `$name = value` sets the innermost
    /// variable of that name.
    fn declare(&mut self, name: &SmolStr, value: GoValue, assign: bool) {
        let from = if assign { 0 } else { self.scope };
        if let Some(slot) = self.vars.get_mut(from..).and_then(|vars| vars.iter_mut().rev().find(|(n, _)| n == name)) {
            slot.1 = value;
            return;
        }
        self.vars.push((name.clone(), value));
    }

    fn pipeline_value(&mut self, dot: &GoValue, pipe: &PipeNode) -> Walk<GoValue> {
        let mut value: Option<GoValue> = None;
        for command in &pipe.commands {
            value = Some(self.command(dot, command, value.take())?);
        }
        Ok(value.unwrap_or(GoValue::Nil))
    }

    fn pipeline(&mut self, dot: &GoValue, pipe: &PipeNode) -> Walk<GoValue> {
        let value = self.pipeline_value(dot, pipe)?;
        match pipe.decl.as_slice() {
            [] => {}
            [name] => self.declare(name, value.clone(), pipe.is_assign),
            more => {
                return Err(TemplateError::Exec(format!(
                    "cannot assign {} variables outside a range pipeline",
                    more.len()
                ))
                .into())
            }
        }
        Ok(value)
    }

    fn command(&mut self, dot: &GoValue, command: &CommandNode, piped: Option<GoValue>) -> Walk<GoValue> {
        let Some(first) = command.args.first() else { return Ok(GoValue::Nil) };
        let rest = &command.args[1..];
        match first {
            Expr::Identifier(_, name) => return self.call(dot, name, rest, piped),
            Expr::Chain(_, inner, fields) => {
                if let Expr::Identifier(_, name) = inner.as_ref() {
                    let value = self.call(dot, name, rest, piped)?;
                    return self.fields(value, fields);
                }
            }
            _ => {}
        }
        if piped.is_some() || !rest.is_empty() {
            return self.method(dot, first, rest, piped);
        }
        if matches!(first, Expr::Nil(_)) {
            return Err(TemplateError::Exec("nil is not a command".into()).into());
        }
        self.expr(dot, first)
    }

    /// A field given arguments: a method of the value it is a field of. Template values have
    /// methods where Go's have them: a `*semver.Version`'s `Compare`, `LessThan`, `GreaterThan`
    /// and `Equal`.
    fn method(&mut self, dot: &GoValue, first: &Expr, rest: &[Expr], piped: Option<GoValue>) -> Walk<GoValue> {
        let (receiver, name) = match first {
            Expr::Field(_, fields) => match fields.split_last() {
                Some((name, path)) => (self.fields(dot.clone(), path)?, name),
                None => return Err(non_function(first)),
            },
            Expr::Variable(_, var, fields) if !fields.is_empty() => match fields.split_last() {
                Some((name, path)) => (self.fields(self.variable(var)?, path)?, name),
                None => return Err(non_function(first)),
            },
            Expr::Chain(_, inner, fields) => match fields.split_last() {
                Some((name, path)) => {
                    let base = self.expr(dot, inner)?;
                    (self.fields(base, path)?, name)
                }
                None => return Err(non_function(first)),
            },
            _ => return Err(non_function(first)),
        };
        let GoValue::Semver(version) = receiver else { return Err(non_function(first)) };
        let mut args = Vec::with_capacity(rest.len() + 1);
        for arg in rest {
            args.push(self.expr(dot, arg)?);
        }
        args.extend(piped);
        Ok(semver_method(&version, name, &args)?)
    }

    fn variable(&self, name: &str) -> Walk<GoValue> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.clone())
            .ok_or_else(|| TemplateError::UndefinedVariable(name.to_string()).into())
    }

    fn fields(&self, mut value: GoValue, fields: &[SmolStr]) -> Walk<GoValue> {
        for name in fields {
            value = field(&value, name, self.program.missing_zero())?;
        }
        Ok(value)
    }

    fn expr(&mut self, dot: &GoValue, expr: &Expr) -> Walk<GoValue> {
        match expr {
            Expr::Dot(_) => Ok(dot.clone()),
            Expr::Field(_, fields) => self.fields(dot.clone(), fields),
            Expr::Variable(_, name, fields) => {
                let value = self.variable(name)?;
                self.fields(value, fields)
            }
            Expr::String(_, s) => Ok(GoValue::String(s.clone())),
            Expr::Number(_, n) => match *n {
                Number::Int(i) => Ok(GoValue::Int(i)),
                Number::Uint(u) => Err(TemplateError::Exec(format!("{u} overflows int")).into()),
                Number::Float(f) => Ok(GoValue::Float(f)),
            },
            Expr::Bool(_, b) => Ok(GoValue::Bool(*b)),
            Expr::Nil(_) => Ok(GoValue::Nil),
            // A parenthesized pipeline's variables end with it.
            Expr::Pipe(_, pipe) => self.scoped(|exec| exec.pipeline(dot, pipe)),
            Expr::Identifier(_, name) => self.call(dot, name, &[], None),
            Expr::Chain(_, inner, fields) => {
                let value = self.expr(dot, inner)?;
                self.fields(value, fields)
            }
        }
    }

    /// Calls the function `name` with `arg_exprs` evaluated, then the piped value.
    fn call(&mut self, dot: &GoValue, name: &str, arg_exprs: &[Expr], piped: Option<GoValue>) -> Walk<GoValue> {
        if LAZY.contains(&name) {
            return self.and_or(dot, name == "and", arg_exprs, piped);
        }
        let program = self.program;
        let Some(function) = program.function(name) else {
            return Err(TemplateError::UndefinedFunction(name.to_string()).into());
        };
        let mut args = Vec::with_capacity(arg_exprs.len() + 1);
        let mut whole_constants = 0u64;
        for (i, expr) in arg_exprs.iter().enumerate() {
            if let Expr::Number(_, Number::Float(f)) = expr {
                if f.fract() == 0.0 && f.abs() < 9.2e18 && i < 64 {
                    whole_constants |= 1 << i;
                }
            }
            args.push(self.expr(dot, expr)?);
        }
        args.extend(piped);
        let context = Context { budget: self.budget, nesting: self.nesting };
        let counted = Args::counted(name, &args, function.arity)?.with_constants(whole_constants).in_context(context);
        let factor = match function.cost {
            Cost::Free => return Ok((function.body)(&counted)?),
            Cost::Call => None,
            Cost::Writes(factor) => Some(factor),
            // printf with only plain verbs writes its arguments as they are.
            Cost::Printf => Some(match args.first() {
                Some(GoValue::String(format)) if !format.contains(['q', 'x', 'X', '#', 'U']) => 1,
                _ => ESCAPES,
            }),
        };
        // A step, and more for long strings, which functions read whole (a 16 MB string hashed in
        // a loop of 100 000 rounds is 100 000 steps otherwise).
        let reading: u64 = args.iter().map(reading_steps).sum();
        self.budget.charge_steps(1 + reading).map_err(|e| TemplateError::Exec(e.to_string()))?;
        // A function that writes its arguments' text must fit before it builds it: what printing
        // them writes (shared parts as often as printed), times what escaping may multiply it by.
        if let Some(factor) = factor {
            let mut size = 0u64;
            for arg in &args {
                size = size.saturating_add(self.measure(arg)?.size);
            }
            let exhausted = |e: Exhausted| TemplateError::Exec(format!("{name}: {e}"));
            self.budget.output_fits(size.saturating_mul(factor)).map_err(exhausted)?;
        }
        let result = (function.body)(&counted)?;
        // A list or map the call was given (`set` returns the map it changed, `default` a value)
        // is not new: it was charged and measured when it was made.
        if result.is_container() && args.iter().any(|arg| same(arg, &result)) {
            return Ok(result);
        }
        // What a call builds counts as produced output, written or not (`$x := repeat …`), as the
        // memory it takes (a list's slots, a map's entries), and may not nest deeper than values
        // may.
        let size = match &result {
            GoValue::String(s) => s.len(),
            GoValue::List(items) => list_bytes(items.len()),
            GoValue::Map(map) => map.read().keys().map(|key| entry_bytes(key)).sum(),
            _ => 0,
        };
        self.budget.charge_output(size).map_err(|e| TemplateError::Exec(e.to_string()))?;
        if result.is_container() {
            self.measure(&result)?;
        }
        Ok(result)
    }

    /// `and` and `or`: the arguments evaluated in order until one decides (Go 1.18's).
    fn and_or(&mut self, dot: &GoValue, and: bool, arg_exprs: &[Expr], piped: Option<GoValue>) -> Walk<GoValue> {
        let name = if and { "and" } else { "or" };
        if arg_exprs.is_empty() && piped.is_none() {
            Args::at_least(name, &[], 1)?;
        }
        let mut last = GoValue::Nil;
        for expr in arg_exprs {
            let value = self.expr(dot, expr)?;
            if value.is_truthy() != and {
                return Ok(value);
            }
            last = value;
        }
        if let Some(value) = piped {
            if value.is_truthy() != and {
                return Ok(value);
            }
            last = value;
        }
        Ok(last)
    }

    /// The measure of a value, or an error when it nests deeper than [`MAX_VALUE_DEPTH`].
    fn measure(&mut self, value: &GoValue) -> Result<Measure, TemplateError> {
        let now = generation();
        if self.measures.generation != now {
            self.measures.known.clear();
            self.measures.generation = now;
        }
        measure_at(&mut self.measures.known, value, 0)
    }
}

/// Steps for reading an argument whole, beyond the call's one: a step per KiB of a string (a
/// function hashes, searches or splits it whole). Lists and maps are not charged here: most
/// functions touch one entry (`set`, `get`, `index`), those that build from all of them are
/// charged what they build, and those that only walk them (`has`, `deepEqual`, `merge`) meter
/// what they visit.
fn reading_steps(value: &GoValue) -> u64 {
    match value {
        GoValue::String(s) => u64::try_from(s.len() / 1024).unwrap_or(u64::MAX),
        _ => 0,
    }
}

/// Whether two values are the same list or map.
fn same(a: &GoValue, b: &GoValue) -> bool {
    match (a, b) {
        (GoValue::List(a), GoValue::List(b)) => a.ptr_eq(b),
        (GoValue::Map(a), GoValue::Map(b)) => a.ptr_eq(b),
        _ => false,
    }
}

fn non_function(first: &Expr) -> Flow {
    let name = match first {
        Expr::Field(..) => "<field>",
        Expr::Variable(..) => "<variable>",
        Expr::Chain(..) => "<chain>",
        Expr::Dot(_) => "<.>",
        Expr::String(..) => "<string>",
        Expr::Number(..) => "<number>",
        Expr::Bool(..) => "<bool>",
        Expr::Nil(_) => "<nil>",
        Expr::Pipe(..) => "<pipeline>",
        Expr::Identifier(..) => "<identifier>",
    };
    TemplateError::Exec(format!("can't give argument to non-function {name}")).into()
}

/// Go's field `.name` of a value: a map's entry (when missing, nil; with `missingkey=zero`, the
/// zero value of its element type), a version's method without arguments; a field of nil is nil.
fn field(value: &GoValue, name: &str, zero: bool) -> Result<GoValue, TemplateError> {
    match value {
        GoValue::Map(map) => Ok(map.get(name).unwrap_or_else(|| {
            if zero && map.is_strings() {
                GoValue::String("".into())
            } else {
                GoValue::Nil
            }
        })),
        GoValue::Nil => Ok(GoValue::Nil),
        GoValue::Semver(version) => semver_field(version, name)
            .ok_or_else(|| TemplateError::Exec(format!("can't evaluate field {name} in type {}", go_type(value)))),
        other => Err(TemplateError::Exec(format!("can't evaluate field {name} in type {}", go_type(other)))),
    }
}

/// A version's methods without arguments: `Major`, `Minor`, `Patch`, `Prerelease`, `Metadata`,
/// `String`, `IncMajor`, `IncMinor`, `IncPatch`, and a pointer's `Original`.
fn semver_field(semver: &Semver, name: &str) -> Option<GoValue> {
    let v = &semver.version;
    Some(match name {
        "Major" => GoValue::Uint(v.major),
        "Minor" => GoValue::Uint(v.minor),
        "Patch" => GoValue::Uint(v.patch),
        "Prerelease" => GoValue::String(v.pre.as_str().into()),
        "Metadata" => GoValue::String(v.metadata.as_str().into()),
        "Original" if semver.pointer => GoValue::String(semver.original.clone()),
        "String" => GoValue::String(v.text().into()),
        "IncMajor" => next(semver, Version { major: v.major.wrapping_add(1), ..Version::default() }),
        "IncMinor" => next(semver, Version { major: v.major, minor: v.minor.wrapping_add(1), ..Version::default() }),
        // A pre-release's next patch is its release.
        "IncPatch" => next(
            semver,
            Version {
                patch: if v.pre.is_empty() { v.patch.wrapping_add(1) } else { v.patch },
                ..Version { major: v.major, minor: v.minor, ..Version::default() }
            },
        ),
        _ => return None,
    })
}

/// A `semver.Version` made from `semver`: its original text is its own, with the `v` prefix the
/// first had (Masterminds' `originalVPrefix`).
fn next(semver: &Semver, version: Version) -> GoValue {
    let prefix = if semver.original.starts_with('v') { "v" } else { "" };
    let original = format!("{prefix}{}", version.text()).into();
    GoValue::Semver(Arc::new(Semver { version, original, pointer: false }))
}

/// A version's methods with arguments: `SetPrerelease` and `SetMetadata` (a string), and a
/// pointer's `Compare`, `LessThan`, `GreaterThan` and `Equal` (each takes a `*semver.Version`).
fn semver_method(receiver: &Semver, name: &str, args: &[GoValue]) -> Result<GoValue, TemplateError> {
    let count = |n: usize| -> Result<(), TemplateError> {
        if args.len() != n {
            return Err(TemplateError::Exec(format!("wrong number of args for {name}: want {n} got {}", args.len())));
        }
        Ok(())
    };
    let wrong = |arg: &GoValue, expected: &str| {
        TemplateError::Exec(format!("wrong type for value; expected {expected}; got {}", super::fmt::type_name(arg)))
    };
    let other = || -> Result<&Semver, TemplateError> {
        count(1)?;
        match &args[0] {
            GoValue::Semver(other) if other.pointer => Ok(other),
            arg => Err(wrong(arg, "*semver.Version")),
        }
    };
    let text = || -> Result<&str, TemplateError> {
        count(1)?;
        args[0].as_str().ok_or_else(|| wrong(&args[0], "string"))
    };
    let order = |other: &Semver| receiver.version.compare(&other.version);
    let v = &receiver.version;
    Ok(match name {
        "Compare" if receiver.pointer => GoValue::Int(match order(other()?) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }),
        "LessThan" if receiver.pointer => GoValue::Bool(order(other()?) == Ordering::Less),
        "GreaterThan" if receiver.pointer => GoValue::Bool(order(other()?) == Ordering::Greater),
        "Equal" if receiver.pointer => GoValue::Bool(order(other()?) == Ordering::Equal),
        "SetPrerelease" => {
            let pre = text()?;
            if !pre.is_empty() {
                identifiers(pre, true).map_err(|e| fail(name, e))?;
            }
            next(receiver, Version { pre: pre.to_string(), ..v.clone() })
        }
        "SetMetadata" => {
            let metadata = text()?;
            if !metadata.is_empty() {
                identifiers(metadata, false).map_err(|e| fail(name, e))?;
            }
            next(receiver, Version { metadata: metadata.to_string(), ..v.clone() })
        }
        _ => {
            return Err(TemplateError::Exec(format!(
                "can't evaluate field {name} in type {}",
                if receiver.pointer { "*semver.Version" } else { "semver.Version" }
            )))
        }
    })
}

/// Masterminds' checks of a pre-release (`validatePrerelease`: a numeric part has no leading
/// zero) or of metadata (`validateMetadata`): dot-separated parts of `[0-9A-Za-z-]`.
fn identifiers(text: &str, pre: bool) -> Result<(), &'static str> {
    for part in text.split('.') {
        let numeric = part.bytes().all(|c| c.is_ascii_digit());
        if pre && numeric && part.len() > 1 && part.starts_with('0') {
            return Err("Version segment starts with 0");
        }
        if !part.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
            return Err(if pre { "Invalid Prerelease string" } else { "Invalid Metadata string" });
        }
    }
    Ok(())
}

fn measure_at(
    known: &mut HashMap<usize, (GoValue, Measure)>,
    value: &GoValue,
    depth: usize,
) -> Result<Measure, TemplateError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(TemplateError::Exec(format!(
            "a value nests more than {MAX_VALUE_DEPTH} levels deep: templates may not build values that deep"
        )));
    }
    let key = match value {
        GoValue::List(items) => Some(items.address()),
        GoValue::Map(map) => Some(map.address()),
        _ => None,
    };
    if let Some(key) = key {
        if let Some((_, measure)) = known.get(&key) {
            if depth + measure.depth > MAX_VALUE_DEPTH {
                return measure_at(known, &GoValue::Nil, MAX_VALUE_DEPTH + 1);
            }
            return Ok(*measure);
        }
    }
    let digits = |n: u64| u64::from(n.checked_ilog10().unwrap_or(0)) + 1;
    let mut total = match value {
        GoValue::Nil | GoValue::Bool(_) => Measure { size: 5, depth: 0 },
        GoValue::Int(n) | GoValue::Int64(n) => Measure { size: digits(n.unsigned_abs()) + 1, depth: 0 },
        GoValue::Uint(n) => Measure { size: digits(*n), depth: 0 },
        GoValue::Float(_) => Measure { size: 8, depth: 0 },
        GoValue::String(s) => Measure { size: s.len() as u64, depth: 0 },
        GoValue::Semver(v) => Measure { size: v.version.text().len() as u64, depth: 0 },
        GoValue::List(items) => measure_items(known, items, depth)?,
        GoValue::Map(map) => {
            let map = map.read();
            let mut total = Measure { size: 5 + 2 * map.len() as u64, depth: 1 };
            for (key, item) in map.iter() {
                let inner = measure_at(known, item, depth + 1)?;
                total.size = total.size.saturating_add(inner.size).saturating_add(key.len() as u64);
                total.depth = total.depth.max(inner.depth + 1);
            }
            total
        }
    };
    total.size = total.size.max(1);
    if let Some(key) = key {
        known.insert(key, (value.clone(), total));
    }
    Ok(total)
}

fn measure_items(
    known: &mut HashMap<usize, (GoValue, Measure)>,
    items: &List,
    depth: usize,
) -> Result<Measure, TemplateError> {
    let mut total = Measure { size: 2 + items.len() as u64, depth: 1 };
    for item in items.iter() {
        let inner = measure_at(known, item, depth + 1)?;
        total.size = total.size.saturating_add(inner.size);
        total.depth = total.depth.max(inner.depth + 1);
    }
    Ok(total)
}

/// What a `range` runs over.
enum Items {
    List(List),
    Map(Vec<(std::sync::Arc<str>, GoValue)>),
    /// A count (Go 1.22's range over an integer), `uint64` or `int`.
    Count(u64, bool),
}

impl Items {
    fn len(&self) -> u64 {
        match self {
            Items::List(items) => items.len() as u64,
            Items::Map(entries) => entries.len() as u64,
            Items::Count(n, _) => *n,
        }
    }

    /// The key and the item at `i` (below [`len`](Self::len)).
    fn get(&self, i: u64) -> (GoValue, GoValue) {
        let at = usize::try_from(i).unwrap_or(usize::MAX);
        #[allow(clippy::cast_possible_wrap)]
        let int = GoValue::Int(i as i64);
        match self {
            Items::List(items) => (int, items.get(at).cloned().unwrap_or(GoValue::Nil)),
            Items::Map(entries) => {
                entries.get(at).map_or((GoValue::Nil, GoValue::Nil), |(k, v)| (GoValue::String(k.clone()), v.clone()))
            }
            Items::Count(_, true) => (GoValue::Uint(i), GoValue::Uint(i)),
            Items::Count(_, false) => (int.clone(), int),
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
