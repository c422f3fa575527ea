//! Parser: tokens to an AST with a span on every node. Precedence and associativity follow
//! expr-lang (parser/operator/operator.go): `or ||` 10, `and &&` 15, comparisons and word
//! operators 20, `+ -` 30, `* / %` 60, `** ^` 100 (right), `??` 500; unary `! not` 50, `- +` 90;
//! the ternary last. Like expr, `??` may not be mixed with another binary operator at the same
//! level without parentheses, and `a < b < c` chains into `a < b && b < c`. `a[i:j]` is a slice;
//! number, boolean and nil literals take no member access after them (`nil.a` does not parse in
//! expr either). `let name = value; body` and `a; b` sequences are expr's (v1.17).

use super::ast::{Node, NodeKind, MAX_DEPTH};
use super::error::{regex_error, ExprError, Span};
use super::lex::{lex, Token};
use super::scope::{Builtin, Kind};
use super::value::float;
use crate::doc::Value;

fn binary_precedence(op: &str) -> Option<(u8, bool)> {
    Some(match op {
        "or" | "||" => (10, false),
        "and" | "&&" => (15, false),
        "==" | "!=" | "<" | ">" | "<=" | ">=" | "in" | "matches" | "contains" | "startsWith" | "endsWith" => {
            (20, false)
        }
        ".." => (25, false),
        "+" | "-" => (30, false),
        "*" | "/" | "%" => (60, false),
        "**" | "^" => (100, true),
        "??" => (200, false),
        _ => return None,
    })
}

/// Parses `source`; a call is resolved to its row in `functions`.
pub fn parse(source: &str, functions: &'static [Builtin]) -> Result<Node, ExprError> {
    let tokens = lex(source)?;
    let mut parser = Parser { tokens, pos: 0, depth: 0, closures: 0, vars: Vec::new(), functions };
    if parser.peek() == &Token::Eof {
        return Err(ExprError::new("expression is empty", Span::new(0, 0)));
    }
    let node = parser.sequence()?;
    match parser.peek() {
        Token::Eof => Ok(node),
        _ => Err(parser.unexpected()),
    }
}

struct Parser {
    tokens: Vec<(Token, Span)>,
    pos: usize,
    depth: usize,
    /// How many predicate closures enclose the current token: `#` and `.name` need one.
    closures: usize,
    /// The names the enclosing `let`s declare, innermost last.
    vars: Vec<String>,
    functions: &'static [Builtin],
}

impl Parser {
    fn peek(&self) -> &Token {
        self.tokens.get(self.pos).map_or(&Token::Eof, |(t, _)| t)
    }

    fn span(&self) -> Span {
        self.tokens.get(self.pos).map_or(Span::new(0, 0), |(_, s)| *s)
    }

    fn advance(&mut self) -> (Token, Span) {
        let token = self.tokens.get(self.pos).cloned().unwrap_or((Token::Eof, Span::new(0, 0)));
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        token
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Token::Op(o) if *o == op)
    }

    fn expect(&mut self, op: &str) -> Result<Span, ExprError> {
        if self.is_op(op) {
            Ok(self.advance().1)
        } else {
            Err(self.unexpected())
        }
    }

    /// expr's wording: `unexpected token Operator(",")`.
    fn unexpected(&self) -> ExprError {
        let what = match self.peek() {
            Token::Eof => "EOF".to_string(),
            Token::Int(n) => format!("Number(\"{n}\")"),
            Token::Float(f) => format!("Number(\"{f}\")"),
            Token::Str(s) => format!("String({s:?})"),
            Token::Ident(i) => format!("Identifier({i:?})"),
            Token::Op(o @ ("(" | ")" | "[" | "]" | "{" | "}")) => format!("Bracket({o:?})"),
            Token::Op(o) => format!("Operator({o:?})"),
            Token::Pointer(p) => format!("Operator(\"#{p}\")"),
        };
        let span = self.span();
        // At the end, point at the last character, as expr does.
        let span =
            if self.peek() == &Token::Eof && span.start > 0 { Span::new(span.start - 1, span.start) } else { span };
        ExprError::new(format!("unexpected token {what}"), span)
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        self.check_depth(0)
    }

    /// Chains (`a && a && …`, `a.b.c…`) are parsed in a loop but build a tree one level deeper
    /// per link, which evaluation walks recursively: they count against the same limit.
    fn check_depth(&self, chain: usize) -> Result<(), ExprError> {
        if self.depth + chain > MAX_DEPTH {
            return Err(ExprError::new(
                format!("expression is nested more than {MAX_DEPTH} levels deep; split it into smaller expressions"),
                self.span(),
            ));
        }
        Ok(())
    }

    /// expr's parseSequenceExpression: expressions separated by `;` (a trailing one allowed at
    /// the end of the source), the whole expression, a parenthesis' or a braced closure's body.
    /// Adds no nesting level of its own: its expressions are evaluated one after another.
    fn sequence(&mut self) -> Result<Node, ExprError> {
        let first = self.expression()?;
        let mut nodes = Vec::new();
        while self.is_op(";") {
            self.advance();
            if self.peek() == &Token::Eof {
                break;
            }
            nodes.push(self.expression()?);
        }
        if nodes.is_empty() {
            return Ok(first);
        }
        nodes.insert(0, first);
        let span = nodes[0].span.to(nodes[nodes.len() - 1].span);
        Ok(Node { kind: NodeKind::Sequence(nodes), span })
    }

    /// expr's parseVariableDeclaration: `let name = value; body`, the body a sequence in which
    /// `name` is the value. A name already declared around it is refused, as expr's checker does.
    fn let_binding(&mut self) -> Result<Node, ExprError> {
        let start = self.advance().1;
        let (name, at) = match self.peek() {
            Token::Ident(name) => (name.clone(), self.span()),
            _ => return Err(self.unexpected()),
        };
        self.advance();
        self.expect("=")?;
        let value = self.expression()?;
        self.expect(";")?;
        if self.vars.contains(&name) {
            return Err(ExprError::new(format!("cannot redeclare variable {name}"), at));
        }
        self.vars.push(name.clone());
        let body = self.sequence();
        self.vars.pop();
        let body = body?;
        let span = start.to(body.span);
        Ok(Node { kind: NodeKind::Let { name, at, value: Box::new(value), body: Box::new(body) }, span })
    }

    fn expression(&mut self) -> Result<Node, ExprError> {
        if self.is_op("let") {
            self.enter()?;
            let node = self.let_binding();
            self.depth -= 1;
            return node;
        }
        self.enter()?;
        let cond = self.binary(0)?;
        let node = if self.is_op("?") {
            self.advance();
            let then = if self.is_op(":") { None } else { Some(Box::new(self.expression()?)) };
            self.expect(":")?;
            let otherwise = self.expression()?;
            let span = cond.span.to(otherwise.span);
            let at = self.span();
            Node { kind: NodeKind::Ternary { cond: Box::new(cond), then, otherwise: Box::new(otherwise), at }, span }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(node)
    }

    fn binary(&mut self, min: u8) -> Result<Node, ExprError> {
        self.enter()?;
        let mut left = self.unary()?;
        let mut previous: Option<&'static str> = None;
        let mut chain = 0;
        loop {
            chain += 1;
            self.check_depth(chain)?;
            let (op, negated) = match self.peek() {
                Token::Op("not") => match self.tokens.get(self.pos + 1) {
                    Some((Token::Op(op @ ("in" | "matches" | "contains" | "startsWith" | "endsWith")), _)) => {
                        (*op, true)
                    }
                    _ => break,
                },
                Token::Op(op) => (*op, false),
                _ => break,
            };
            let Some((precedence, right_assoc)) = binary_precedence(op) else { break };
            if precedence < min {
                break;
            }
            if previous == Some("??") && op != "??" {
                return Err(ExprError::new(
                    format!(
                        "Operator ({op}) and coalesce expressions (??) cannot be mixed. Wrap either by parentheses."
                    ),
                    self.span(),
                ));
            }
            if negated {
                self.advance();
            }
            let op_span = self.advance().1;
            let right = self.binary(if right_assoc { precedence } else { precedence + 1 })?;
            let span = left.span.to(right.span);
            left = match (op, &right.kind) {
                ("matches", NodeKind::Literal(Value::String(pattern))) => {
                    let pattern = regex::Regex::new(pattern)
                        .map_err(|err| ExprError::new(regex_error(pattern, &err), right.span))?;
                    Node { kind: NodeKind::Matches { subject: Box::new(left), pattern, op_span }, span }
                }
                _ => chain_comparison(op, op_span, left, right, span),
            };
            if negated {
                left = Node { kind: NodeKind::Unary { op: "not", operand: Box::new(left) }, span };
            }
            previous = Some(op);
        }
        self.depth -= 1;
        Ok(left)
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        let span = self.span();
        match self.peek() {
            Token::Op(op @ ("!" | "not")) => {
                let op = *op;
                self.advance();
                self.enter()?;
                let operand = self.binary(50)?;
                self.depth -= 1;
                let span = span.to(operand.span);
                self.postfix(Node { kind: NodeKind::Unary { op, operand: Box::new(operand) }, span })
            }
            Token::Op(op @ ("-" | "+")) => {
                let op = *op;
                self.advance();
                self.enter()?;
                let operand = self.binary(90)?;
                self.depth -= 1;
                let span = span.to(operand.span);
                self.postfix(Node { kind: NodeKind::Unary { op, operand: Box::new(operand) }, span })
            }
            _ => {
                // As in expr, number, boolean and nil literals take no `.`, `[` after them.
                let bare = matches!(self.peek(), Token::Int(_) | Token::Float(_) | Token::Op("nil"))
                    || matches!(self.peek(), Token::Ident(name) if name == "true" || name == "false");
                let node = self.primary()?;
                if bare {
                    return Ok(node);
                }
                self.postfix(node)
            }
        }
    }

    /// `.name`, `?.name`, `[index]`, `[from:to]` and their `?.` forms after `node`.
    fn postfix(&mut self, mut node: Node) -> Result<Node, ExprError> {
        let mut chain = 0;
        loop {
            chain += 1;
            self.check_depth(chain)?;
            let optional = self.is_op("?.");
            if self.is_op(".") || optional {
                self.advance();
                if optional && self.is_op("[") {
                    node = self.index(node)?;
                    continue;
                }
                let (token, span) = self.advance();
                let key = match token {
                    Token::Ident(name) => name,
                    Token::Op(word) if word.chars().all(char::is_alphabetic) => word.to_string(),
                    _ => {
                        self.pos -= 1;
                        return Err(self.unexpected());
                    }
                };
                let key = Node { kind: NodeKind::Literal(Value::String(key)), span };
                let at = span;
                let span = node.span.to(span);
                node = Node { kind: NodeKind::Member { object: Box::new(node), key: Box::new(key), at }, span };
            } else if self.is_op("[") {
                node = self.index(node)?;
            } else {
                return Ok(node);
            }
        }
    }

    /// `[index]` or a slice, `[from:to]` with either bound left out (expr's parsePostfixExpression).
    fn index(&mut self, object: Node) -> Result<Node, ExprError> {
        let at = self.expect("[")?;
        let from = if self.is_op(":") { None } else { Some(self.expression()?) };
        let from = match from {
            Some(key) if !self.is_op(":") => {
                let span = object.span.to(self.expect("]")?);
                return Ok(Node { kind: NodeKind::Member { object: Box::new(object), key: Box::new(key), at }, span });
            }
            from => from,
        };
        self.expect(":")?;
        let to = if self.is_op("]") { None } else { Some(Box::new(self.expression()?)) };
        let end = self.expect("]")?;
        let span = object.span.to(end);
        Ok(Node { kind: NodeKind::Slice { object: Box::new(object), from: from.map(Box::new), to, at }, span })
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        self.enter()?;
        let (token, span) = self.advance();
        let node = match token {
            Token::Int(n) => Node { kind: NodeKind::Literal(Value::from(n)), span },
            Token::Float(f) => Node { kind: NodeKind::Literal(float(f)), span },
            Token::Str(s) => Node { kind: NodeKind::Literal(Value::String(s)), span },
            Token::Op("nil") => Node { kind: NodeKind::Literal(Value::Null), span },
            Token::Ident(name) if name == "true" || name == "false" => {
                Node { kind: NodeKind::Literal(Value::Bool(name == "true")), span }
            }
            Token::Ident(name) if self.is_op("(") => self.call(name, span)?,
            Token::Pointer(name) if self.closures > 0 => Node { kind: NodeKind::Pointer(name), span },
            Token::Pointer(_) => {
                return Err(ExprError::new("cannot use pointer accessor outside predicate", span));
            }
            // `.name` inside a closure is `#.name`, as in expr.
            Token::Op(".") if self.closures > 0 && matches!(self.peek(), Token::Ident(_)) => {
                let (token, key_span) = self.advance();
                let Token::Ident(key) = token else { return Err(self.unexpected()) };
                let object = Box::new(Node { kind: NodeKind::Pointer(String::new()), span });
                let key = Box::new(Node { kind: NodeKind::Literal(Value::String(key)), span: key_span });
                Node { kind: NodeKind::Member { object, key, at: key_span }, span: span.to(key_span) }
            }
            Token::Ident(name) if self.vars.contains(&name) => Node { kind: NodeKind::Var(name), span },
            Token::Ident(name) => Node { kind: NodeKind::Ident(name), span },
            Token::Op("(") => {
                let inner = self.sequence()?;
                self.expect(")")?;
                inner
            }
            Token::Op("[") => {
                let mut items = Vec::new();
                while !self.is_op("]") {
                    items.push(self.expression()?);
                    if !self.is_op("]") {
                        self.expect(",")?;
                    }
                }
                let end = self.expect("]")?;
                Node { kind: NodeKind::Array(items), span: span.to(end) }
            }
            Token::Op("{") => {
                let mut entries = Vec::new();
                while !self.is_op("}") {
                    let key = match self.advance().0 {
                        Token::Ident(k) | Token::Str(k) => k,
                        Token::Int(n) => n.to_string(),
                        Token::Op(word) if word.chars().all(char::is_alphabetic) => word.to_string(),
                        _ => {
                            self.pos -= 1;
                            return Err(ExprError::new(
                                "a map key must be a quoted string, a number or an identifier",
                                self.span(),
                            ));
                        }
                    };
                    self.expect(":")?;
                    entries.push((key, self.expression()?));
                    if !self.is_op("}") {
                        self.expect(",")?;
                    }
                }
                let end = self.expect("}")?;
                Node { kind: NodeKind::Map(entries), span: span.to(end) }
            }
            _ => {
                self.pos -= 1;
                return Err(self.unexpected());
            }
        };
        self.depth -= 1;
        Ok(node)
    }

    fn call(&mut self, name: String, span: Span) -> Result<Node, ExprError> {
        let Some(fun) = self.functions.iter().position(|row| row.name == name) else {
            let names: Vec<&str> = self.functions.iter().map(|row| row.name).collect();
            return Err(ExprError::new(format!("unknown func {name} (the functions are {})", names.join(", ")), span));
        };
        if self.functions[fun].kind == Kind::Predicate {
            return self.predicate(name, fun, span);
        }
        self.expect("(")?;
        let mut args = Vec::new();
        while !self.is_op(")") {
            args.push(self.expression()?);
            if !self.is_op(")") {
                self.expect(",")?;
            }
        }
        let end = self.expect(")")?;
        Ok(Node { kind: NodeKind::Call { name, fun, args }, span: span.to(end) })
    }
}

impl Parser {
    /// A predicate call as expr's parseCall reads one: the collection, then the closure (in
    /// braces or bare), then for `reduce` and `sortBy` an optional expression; `count` and `sum`
    /// may leave the closure out (their rows' arities say so).
    fn predicate(&mut self, name: String, fun: usize, span: Span) -> Result<Node, ExprError> {
        let arity = self.functions[fun].arity;
        self.expect("(")?;
        let mut args = vec![self.expression()?];
        let closure_optional = arity.min() < 2;
        if !(closure_optional && self.is_op(")")) {
            self.expect(",")?;
            let start = self.span();
            let braced = self.is_op("{");
            if braced {
                self.advance();
            }
            self.closures += 1;
            let body = if braced { self.sequence() } else { self.expression() };
            self.closures -= 1;
            let body = body?;
            if !braced && self.is_op(";") {
                return Err(ExprError::new("wrap predicate with brackets { and }", self.span()));
            }
            let end = if braced { self.expect("}")? } else { body.span };
            args.push(Node { kind: NodeKind::Closure(Box::new(body)), span: start.to(end) });
            if arity.max().is_some_and(|max| max > 2) && self.is_op(",") {
                self.advance();
                if !self.is_op(")") {
                    args.push(self.expression()?);
                }
            }
        }
        if self.is_op(",") {
            self.advance();
        }
        let end = self.expect(")")?;
        Ok(Node { kind: NodeKind::Call { name, fun, args }, span: span.to(end) })
    }
}

/// `a < b <= c` is `a < b && b <= c` (expr's parseComparison); other operators nest normally.
fn chain_comparison(op: &'static str, op_span: Span, left: Node, right: Node, span: Span) -> Node {
    let is_ordering = |op: &str| matches!(op, "<" | ">" | "<=" | ">=");
    if is_ordering(op) {
        if let NodeKind::Binary { op: inner, right: middle, .. } = &left.kind {
            if is_ordering(inner) {
                let middle = (**middle).clone();
                let second = Node {
                    kind: NodeKind::Binary { op, op_span, left: Box::new(middle), right: Box::new(right) },
                    span,
                };
                let and = NodeKind::Binary { op: "&&", op_span, left: Box::new(left), right: Box::new(second) };
                return Node { kind: and, span };
            }
        }
    }
    Node { kind: NodeKind::Binary { op, op_span, left: Box::new(left), right: Box::new(right) }, span }
}
