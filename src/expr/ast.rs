//! The syntax tree: every node has the span of its source text, which errors point at.

use super::error::Span;
use crate::doc::Value;

/// Nesting deeper than this is refused at parse time; it also bounds evaluation recursion.
pub const MAX_DEPTH: usize = 200;

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum NodeKind {
    Literal(Value),
    Ident(String),
    /// `a.b`, `a?.b`, `a[b]`, `a?.[b]`. Member access on nil is nil here (as in current Windsor), so `?.`
    /// means the same as `.` and needs no flag. `at` is where expr locates the node: the name
    /// after the dot, or the `[`.
    Member {
        object: Box<Node>,
        key: Box<Node>,
        at: Span,
    },
    /// `a[from:to]`, either bound optional; `at` is the `[`.
    Slice {
        object: Box<Node>,
        from: Option<Box<Node>>,
        to: Option<Box<Node>>,
        at: Span,
    },
    /// `op` as written (`!` or `not`, `-`, `+`): expr's messages name it so.
    Unary {
        op: &'static str,
        operand: Box<Node>,
    },
    /// `op_span` locates runtime errors at the operator, as expr does.
    Binary {
        op: &'static str,
        op_span: Span,
        left: Box<Node>,
        right: Box<Node>,
    },
    /// `cond ? a : b`; `cond ?: b` keeps `then` empty and yields `cond` when truthy. `at` is the
    /// token after it, where expr locates the node.
    Ternary {
        cond: Box<Node>,
        then: Option<Box<Node>>,
        otherwise: Box<Node>,
        at: Span,
    },
    /// A call of the builtin `fun` (its row in the table the expression was compiled with).
    Call {
        name: String,
        fun: usize,
        args: Vec<Node>,
    },
    Array(Vec<Node>),
    Map(Vec<(String, Node)>),
    /// `#` (empty), `#acc`, `#index`: only inside a predicate's closure.
    Pointer(String),
    /// A predicate's closure argument (`filter(list, # > 1)`), evaluated once per element.
    Closure(Box<Node>),
    /// `let name = value; body`; `at` is the name, where expr locates the declaration.
    Let {
        name: String,
        at: Span,
        value: Box<Node>,
        body: Box<Node>,
    },
    /// A name a `let` around it declared (resolved while parsing, so it never reads the values).
    Var(String),
    /// `a; b; c`: each evaluated in turn, the last one's value is the result.
    Sequence(Vec<Node>),
    /// `matches` with a literal pattern, compiled once at parse time.
    Matches {
        subject: Box<Node>,
        pattern: regex::Regex,
        op_span: Span,
    },
}
