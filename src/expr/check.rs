//! The compile-time type check of expr-lang's checker (v1.17.6, checker/checker.go), as Windsor
//! meets it: Windsor compiles without declaring any variable, so only literals and what is made
//! from them have a type; a value read from the environment is unknown and stays dynamic.
//! Messages and locations are expr's; the first error in expr's visiting order wins (expr keeps
//! visiting after an error but reports only the first, which is the same).

use super::ast::{Node, NodeKind};
use super::error::{ExprError, Span};
use super::scope::{Builtin, Kind};
use super::ty::{Sig, Ty};
use crate::doc::Value;

type Result<T> = std::result::Result<T, ExprError>;

/// Which of the builtins an expression is compiled with: Windsor compiles `when` with expr's
/// builtins only, and `${…}` with its own `file(string) string`, `jsonnet(string) any`,
/// `split(string, string) []any`, … besides (the rows' [`Kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Builtins,
    Windsor,
}

/// What a check reads besides the tree: the dialect and the builtins' rows.
#[derive(Clone, Copy)]
struct Cx {
    dialect: Dialect,
    functions: &'static [Builtin],
}

/// expr's `or`: one side unknown and the other passing a test (or both unknown).
fn either(l: &Ty, r: &Ty, tests: &[fn(&Ty) -> bool]) -> bool {
    let passes = |t: &Ty| tests.iter().any(|test| test(t));
    (l.is_unknown() && r.is_unknown()) || (l.is_unknown() && passes(r)) || (r.is_unknown() && passes(l))
}

fn comparable(l: &Ty, r: &Ty) -> bool {
    l.is_unknown()
        || r.is_unknown()
        || matches!(l, Ty::Nil)
        || matches!(r, Ty::Nil)
        || (l.is_number() && r.is_number())
        || (l.is_array() && r.is_array())
        || l.assignable_to(r)
}

fn is_bool(t: &Ty) -> bool {
    *t == Ty::Bool
}
fn is_int(t: &Ty) -> bool {
    *t == Ty::Int
}
fn is_number(t: &Ty) -> bool {
    t.is_number()
}
fn is_string(t: &Ty) -> bool {
    *t == Ty::String
}

/// Where expr locates a node's errors: the operator of a unary or binary node, the name after a
/// dot or the `[`, a call's name, the `[`/`{` of a literal, the token after a ternary.
fn location(node: &Node) -> Span {
    let start = node.span.start;
    match &node.kind {
        NodeKind::Binary { op_span, .. } | NodeKind::Matches { op_span, .. } => *op_span,
        NodeKind::Member { at, .. } | NodeKind::Slice { at, .. } | NodeKind::Ternary { at, .. } => *at,
        NodeKind::Call { name, .. } => Span::new(start, start + name.len()),
        // `a not in b` is a `not` around the `in`, located at the `in`.
        NodeKind::Unary { operand, .. } if operand.span.start == start => location(operand),
        NodeKind::Unary { op, .. } => Span::new(start, start + op.len()),
        NodeKind::Array(_) | NodeKind::Map(_) => Span::new(start, start + 1),
        NodeKind::Let { at, .. } => *at,
        NodeKind::Literal(_)
        | NodeKind::Ident(_)
        | NodeKind::Pointer(_)
        | NodeKind::Closure(_)
        | NodeKind::Var(_)
        | NodeKind::Sequence(_) => node.span,
    }
}

fn error(message: String, at: Span) -> ExprError {
    ExprError::new(message, at)
}

/// Whether `name` is a function (Windsor's `expr.Function`s, in a `${…}`) or one of expr's
/// builtins, which a `let` may not redeclare (expr's variableDeclaratorNode).
fn declared(name: &str, cx: Cx) -> Option<&'static str> {
    let kind = cx.functions.iter().find(|row| row.name == name)?.kind;
    match (kind, cx.dialect) {
        (Kind::ExprAndWindsor | Kind::Windsor | Kind::WindsorValue, Dialect::Windsor) => Some("function"),
        (Kind::Expr | Kind::ExprAndWindsor | Kind::Predicate, _) => Some("builtin"),
        _ => None,
    }
}

/// Checks `node`, whose calls are rows of `functions`; an error is a compile error of the
/// expression.
pub fn check(node: &Node, dialect: Dialect, functions: &'static [Builtin]) -> Result<()> {
    visit(node, Cx { dialect, functions }).map(|_| ())
}

fn visit(node: &Node, cx: Cx) -> Result<Ty> {
    match &node.kind {
        NodeKind::Literal(value) => Ok(match value {
            Value::Null => Ty::Nil,
            Value::Bool(_) => Ty::Bool,
            Value::Number(n) if n.is_i64() => Ty::Int,
            Value::Number(_) => Ty::Float,
            Value::String(_) => Ty::String,
            Value::Array(_) | Value::Object(_) => Ty::Unknown,
        }),
        // A `let`'s name is as unknown as the values: its uses are checked when they run.
        NodeKind::Ident(_) | NodeKind::Pointer(_) | NodeKind::Var(_) => Ok(Ty::Unknown),
        NodeKind::Let { name, at, value, body } => {
            if let Some(what) = declared(name, cx) {
                return Err(error(format!("cannot redeclare {what} {name}"), *at));
            }
            visit(value, cx)?;
            visit(body, cx)
        }
        NodeKind::Sequence(nodes) => {
            let mut last = Ty::Unknown;
            for node in nodes {
                last = visit(node, cx)?;
            }
            Ok(last)
        }
        NodeKind::Closure(body) => visit(body, cx),
        NodeKind::Unary { op, operand } => {
            let nt = visit(operand, cx)?;
            match *op {
                "!" | "not" if is_bool(&nt) || nt.is_unknown() => Ok(Ty::Bool),
                "-" | "+" if nt.is_number() => Ok(nt),
                "-" | "+" if nt.is_unknown() => Ok(Ty::Unknown),
                _ => Err(error(format!("invalid operation: {op} (mismatched type {nt})"), location(node))),
            }
        }
        NodeKind::Binary { op, op_span, left, right } => {
            let l = visit(left, cx)?;
            let r = visit(right, cx)?;
            binary(op, l, r, *op_span)
        }
        NodeKind::Matches { subject, op_span, .. } => binary("matches", visit(subject, cx)?, Ty::String, *op_span),
        NodeKind::Member { object, key, .. } => {
            let base = visit(object, cx)?;
            let prop = visit(key, cx)?;
            if base.is_unknown() {
                return Ok(Ty::Unknown);
            }
            let name = match &key.kind {
                NodeKind::Literal(Value::String(name)) => Some(name),
                _ => None,
            };
            match (&base, name) {
                (Ty::Nil, Some(name)) => Err(error(format!("type nil has no field {name}"), location(node))),
                (Ty::Map, _) if !prop.assignable_to(&Ty::String) && !prop.is_unknown() => Err(error(
                    format!("cannot use {prop} to get an element from map[string]interface {{}}"),
                    location(key),
                )),
                (Ty::Array(_) | Ty::Strings, _) if !is_int(&prop) && !prop.is_unknown() => Err(error(
                    format!("array elements can only be selected using an integer (got {prop})"),
                    location(key),
                )),
                (Ty::Map | Ty::Array(_) | Ty::Strings, _) => Ok(base.elem()),
                (_, Some(name)) => Err(error(format!("type {base} has no field {name}"), location(node))),
                (_, None) => Err(error(format!("type {base}[{prop}] is undefined"), location(node))),
            }
        }
        NodeKind::Slice { object, from, to, .. } => {
            let nt = visit(object, cx)?;
            if nt.is_unknown() {
                return Ok(Ty::Unknown);
            }
            if !matches!(nt, Ty::String | Ty::Array(_) | Ty::Strings) {
                return Err(error(format!("cannot slice {nt}"), location(node)));
            }
            for bound in [from, to].into_iter().flatten() {
                let index = visit(bound, cx)?;
                if !is_int(&index) && !index.is_unknown() {
                    return Err(error(format!("non-integer slice index {index}"), location(bound)));
                }
            }
            Ok(nt)
        }
        NodeKind::Ternary { cond, then, otherwise, .. } => {
            let c = visit(cond, cx)?;
            if !is_bool(&c) && !c.is_unknown() {
                return Err(error(format!("non-bool expression (type {c}) used as condition"), location(cond)));
            }
            // `a ?: b` is `a ? a : b` in expr.
            let t1 = match then {
                Some(then) => visit(then, cx)?,
                None => c,
            };
            let t2 = visit(otherwise, cx)?;
            Ok(match (&t1, &t2) {
                (Ty::Nil, _) => t2,
                (_, Ty::Nil) => t1,
                _ if t1.assignable_to(&t2) => t1,
                _ => Ty::Unknown,
            })
        }
        NodeKind::Call { name, fun, args } => match cx.functions.get(*fun) {
            Some(row) => call(row, args, location(node), cx),
            None => Err(error(format!("unknown func {name}"), location(node))),
        },
        NodeKind::Array(items) => {
            // Elements of one kind type the list (`[1, 2][0]` is an int); mixed kinds give
            // `interface {}` elements.
            let mut previous = Ty::Unknown;
            let mut same = true;
            for (i, item) in items.iter().enumerate() {
                let current = visit(item, cx)?;
                if i > 0 && current.kind() != previous.kind() {
                    same = false;
                }
                previous = current;
            }
            Ok(Ty::Array(Box::new(if same { previous } else { Ty::Any })))
        }
        NodeKind::Map(entries) => {
            for (_, value) in entries {
                visit(value, cx)?;
            }
            Ok(Ty::Map)
        }
    }
}

fn binary(op: &str, l: Ty, r: Ty, at: Span) -> Result<Ty> {
    let ok = |t: Ty| Ok(t);
    match op {
        "==" | "!=" if comparable(&l, &r) => return ok(Ty::Bool),
        "or" | "||" | "and" | "&&" if (is_bool(&l) && is_bool(&r)) || either(&l, &r, &[is_bool]) => {
            return ok(Ty::Bool)
        }
        "<" | ">" | "<=" | ">="
            if (l.is_number() && r.is_number())
                || (is_string(&l) && is_string(&r))
                || either(&l, &r, &[is_number, is_string]) =>
        {
            return ok(Ty::Bool)
        }
        "+" | "-" | "*" if l.is_number() && r.is_number() => {
            return ok(if l == Ty::Float || r == Ty::Float { Ty::Float } else { Ty::Int })
        }
        "+" if is_string(&l) && is_string(&r) => return ok(Ty::String),
        "+" if either(&l, &r, &[is_number, is_string]) => return ok(Ty::Unknown),
        "-" | "*" if either(&l, &r, &[is_number]) => return ok(Ty::Unknown),
        "/" | "**" | "^" if (l.is_number() && r.is_number()) || either(&l, &r, &[is_number]) => return ok(Ty::Float),
        "%" if (is_int(&l) && is_int(&r)) || either(&l, &r, &[is_int]) => return ok(Ty::Int),
        ".." if (is_int(&l) && is_int(&r)) || either(&l, &r, &[is_int]) => return ok(Ty::Array(Box::new(Ty::Int))),
        "in" => {
            if r == Ty::Map {
                if !l.is_unknown() && !l.assignable_to(&Ty::String) {
                    return Err(error(format!("cannot use {l} as type string in map key"), at));
                }
                return ok(Ty::Bool);
            }
            if r.is_array() {
                let elem = r.elem();
                if !comparable(&l, &elem) {
                    return Err(error(format!("cannot use {l} as type {elem} in array"), at));
                }
                return ok(Ty::Bool);
            }
            if (l.is_unknown() && (is_string(&r) || r.is_array())) || r.is_unknown() {
                return ok(Ty::Bool);
            }
        }
        "matches" | "contains" | "startsWith" | "endsWith"
            if (is_string(&l) && is_string(&r)) || either(&l, &r, &[is_string]) =>
        {
            return ok(Ty::Bool)
        }
        "??" => {
            return ok(match (&l, &r) {
                (Ty::Nil, _) => r,
                (_, Ty::Nil) => l,
                _ if r.assignable_to(&l) => l,
                _ => Ty::Unknown,
            })
        }
        _ => {}
    }
    Err(error(format!("invalid operation: {op} (mismatched types {l} and {r})"), at))
}

/// A builtin with a `Validate` function in expr ([`Sig::Validate`]): it sees its one argument,
/// unknown as `interface {}`.
fn validate(name: &str, arg: &Ty) -> std::result::Result<Ty, String> {
    let arg = if arg.is_unknown() { Ty::Any } else { arg.clone() };
    let out = match (name, &arg) {
        ("len", Ty::Any | Ty::Array(_) | Ty::Strings | Ty::Map | Ty::String) => Ty::Int,
        ("abs", Ty::Any | Ty::Int | Ty::Float) => arg.clone(),
        ("int", Ty::Any | Ty::Int | Ty::Float | Ty::String) => Ty::Int,
        ("float", Ty::Any | Ty::Int | Ty::Float | Ty::String) => Ty::Float,
        ("keys" | "values", Ty::Any | Ty::Map) => Ty::Array(Box::new(Ty::Any)),
        ("keys" | "values", _) => return Err(format!("cannot get {name} from {}", arg.validated())),
        _ => return Err(format!("invalid argument for {name} (type {})", arg.validated())),
    };
    Ok(out)
}

fn call(row: &Builtin, args: &[Node], at: Span, cx: Cx) -> Result<Ty> {
    let name = row.name;
    // expr-lang's other builtins and predicates take values whose types are rarely known here
    // (the values are `interface {}`): their arguments are checked inside, their errors come
    // when they run. So is Windsor's variadic `cidrsubnets(string, ...int) []any`.
    if let Sig::Returns(out) = row.sig {
        for arg in args {
            visit(arg, cx)?;
        }
        return Ok(out.ty());
    }
    if row.kind == Kind::WindsorValue && cx.dialect == Dialect::Builtins {
        let message =
            format!("{name}() is Windsor v0.9's: a Feature's when cannot call it (a ${{…}} value or a Facet can)");
        return Err(error(message, at));
    }
    // Windsor v0.9's variadic `yaml(string, ...any) any`: the first argument must be text (more
    // than its row takes is an error when it runs).
    if let Sig::Yaml = row.sig {
        let Some(first) = args.first().filter(|_| args.len() >= row.arity.min()) else {
            return Err(error(format!("not enough arguments to call {name}"), at));
        };
        let ty = visit(first, cx)?;
        let message = match ty {
            Ty::Nil => format!("cannot use nil as argument (type string) to call {name}"),
            _ if ty.assignable_to(&Ty::String) || ty.is_unknown() => String::new(),
            _ => format!("cannot use {ty} as argument (type string) to call {name} "),
        };
        if !message.is_empty() {
            return Err(error(message, location(first)));
        }
        for arg in &args[1..] {
            visit(arg, cx)?;
        }
        return Ok(Ty::Any);
    }
    if row.kind == Kind::Windsor && cx.dialect == Dialect::Builtins {
        // Windsor's `when` does not declare them (expr would fail when running); ours reads
        // files here too. Nothing is known of them, so their arguments are not checked, as expr
        // does with an unknown callee.
        if !row.arity.admits(args.len()) {
            return Err(error(row.arity.expr_message(args.len()), at));
        }
        return Ok(Ty::Unknown);
    }
    let overloads = match row.sig {
        Sig::Validate => {
            let types = args.iter().map(|a| visit(a, cx)).collect::<Result<Vec<_>>>()?;
            let (Some(arg), true) = (types.first(), row.arity.admits(types.len())) else {
                return Err(error(row.arity.expr_message(args.len()), at));
            };
            return validate(name, arg).map_err(|message| error(message, at));
        }
        Sig::Overloads(overloads) => overloads,
        Sig::Dialects { when, value } => match cx.dialect {
            Dialect::Builtins => when,
            Dialect::Windsor => value,
        },
        Sig::Returns(_) | Sig::Yaml => &[],
    };
    // Arguments are visited as the overloads reach them, each once: an error inside one is
    // reported before any mismatch, as in expr.
    let mut types: Vec<Option<Ty>> = vec![None; args.len()];
    let nature = |i: usize, types: &mut Vec<Option<Ty>>| -> Result<Ty> {
        if let Some(Some(t)) = types.get(i) {
            return Ok(t.clone());
        }
        let t = visit(&args[i], cx)?;
        types[i] = Some(t.clone());
        Ok(t)
    };
    // A count no overload takes: every argument is visited, then the last overload's
    // complaint, which for a count beyond the row's arity is always this one.
    if !row.arity.admits(args.len()) {
        for i in 0..args.len() {
            nature(i, &mut types)?;
        }
        let which = if args.len() > row.arity.min() { "too many" } else { "not enough" };
        return Err(error(format!("{which} arguments to call {name}"), at));
    }
    let mut last = None;
    'overloads: for (params, out) in overloads {
        if args.len() != params.len() {
            for i in 0..args.len() {
                nature(i, &mut types)?;
            }
            let which = if args.len() > params.len() { "too many" } else { "not enough" };
            last = Some(error(format!("{which} arguments to call {name}"), at));
            continue;
        }
        for (i, param) in params.iter().map(|param| param.ty()).enumerate() {
            let arg = nature(i, &mut types)?;
            let message = match arg {
                Ty::Nil if param == Ty::Any => continue,
                Ty::Nil => format!("cannot use nil as argument (type {param}) to call {name}"),
                _ if arg.assignable_to(&param) || arg.is_unknown() => continue,
                // expr's message ends in a space.
                _ => format!("cannot use {arg} as argument (type {param}) to call {name} "),
            };
            last = Some(error(message, location(&args[i])));
            continue 'overloads;
        }
        return Ok(out.ty());
    }
    Err(last.unwrap_or_else(|| error(format!("no matching overload for {name}"), at)))
}
