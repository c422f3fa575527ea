//! Go's maps are references: `{{ $_ := set $d "k" "v" }}` changes the map `$d` holds, and every
//! variable, field or list that holds the same map sees the change. The gotmpl crate's maps are
//! immutable (`Arc<BTreeMap>`), so Sprig's `set`, `unset`, `merge` and `mergeOverwrite` build a
//! new version and record it here, by the identity (address) of the map they were given; every
//! read of a map in a template that may change one goes through [`latest`] or [`resolve`], which
//! follow those records. A template that never names a changing function records nothing and
//! pays nothing.
//!
//! The records live for one template execution (with the executions `include` starts inside it),
//! on the executing thread: [`scope`] opens them, and the functions find them there.
//!
//! Reads inside the crate (fields, `range`, `if`, printing, the builtins) cannot see the records,
//! so such templates are compiled from a rewritten tree ([`rewrite`]): a field `.a.b` becomes a
//! call of [`GET`], and a value the crate itself reads (printed, tested, ranged over, passed to
//! a builtin) goes through [`RESOLVE`] first. Those names cannot be written in a template.

use super::fmt::go_type;
use super::value::{GoMap, GoValue};
use gotmpl::parse::{CommandNode, Expr, ListNode, Node, PipeNode, Pos};
use gotmpl::TemplateError;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// The field-access function the rewritten tree calls: `GET base "a" "b"` is `base.a.b`.
pub const GET: &str = "render-blueprint:get";
/// The function the rewritten tree passes values through before the crate reads them.
pub const RESOLVE: &str = "render-blueprint:resolve";
/// The function a field called with arguments becomes ([`method`]).
pub const METHOD: &str = "render-blueprint:method";
/// The function a `with`'s value passes through ([`with`]).
pub const WITH: &str = "render-blueprint:with";
/// The function every printed value passes through ([`printable`]).
pub const PRINTABLE: &str = "render-blueprint:printable";

/// The functions that change a map they are given (Sprig's).
pub const CHANGING: &[&str] = &["set", "unset", "merge", "mergeOverwrite", "mustMerge", "mustMergeOverwrite"];

/// The crate's builtins, which read their arguments themselves (`print`, `println`, `printf`,
/// `html`, `js` and `urlquery` are ours: their calls read maps at their newest version, and
/// `printf` reports types).
const BUILTINS: &[&str] = &["and", "or", "not", "len", "index", "slice", "eq", "ne", "lt", "le", "gt", "ge", "call"];

/// Values nest at most this deep: twice what the YAML reader accepts (`limits::MAX_DEPTH`), so
/// data can still be wrapped, while `$x = dict "a" $x` in a loop, or a map set into itself,
/// ends in an error instead of a stack overflow (Go's own overflows printing it).
pub const MAX_VALUE_DEPTH: usize = 2 * crate::limits::MAX_DEPTH;

type MapRef = Arc<GoMap>;

/// One execution's records: a map's address → the map (kept alive, so the address stays its
/// own) and its newer version; and per list or map (kept alive likewise), its measure.
#[derive(Default)]
struct Heap {
    versions: HashMap<usize, (MapRef, MapRef)>,
    measured: HashMap<usize, (GoValue, Measure)>,
    printable: u64,
    limit: u64,
}

/// `PRINTABLE value`: the value's text, once it is known to fit in the output budget. The crate
/// prints a value in whole however long its text (`$x = list $x $x` thirty times is 2^30
/// elements); every printed value passes here first.
pub fn printable(args: &[GoValue]) -> Result<GoValue, TemplateError> {
    let value = resolve(&super::typed::printed(args.first().unwrap_or(&GoValue::Nil)))?;
    let size = measure(&value)?.size;
    let (room, limit) = HEAP.with(|heap| heap.borrow().as_ref().map_or((u64::MAX, 0), |h| (h.printable, h.limit)));
    if size > room {
        return Err(TemplateError::Exec(format!(
            "printing a value of about {size} bytes: {}",
            crate::limits::Exhausted { resource: crate::limits::Resource::Output, limit }
        )));
    }
    // Written as Go's fmt writes it (the crate prints whole floats as integers: `1000000` where
    // Go prints `1e+06`); nil stays nil, which the crate prints as `<no value>`.
    Ok(match value {
        GoValue::Nil | GoValue::String(_) => value,
        other => GoValue::String(super::fmt::sprint(std::slice::from_ref(&other)).into()),
    })
}

/// What printing a value writes (shared parts counted each time they are printed) and how deep
/// it nests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    pub size: u64,
    pub depth: usize,
}

thread_local! {
    static HEAP: RefCell<Option<Heap>> = const { RefCell::new(None) };
}

fn address(map: &MapRef) -> usize {
    Arc::as_ptr(map) as usize
}

/// Runs `f` with records open: a fresh set unless an enclosing execution opened one.
/// `printable` is how many bytes the execution may still write (the output budget left).
pub fn scope<R>(printable: u64, limit: u64, f: impl FnOnce() -> R) -> R {
    let opened = HEAP.with(|heap| {
        let mut heap = heap.borrow_mut();
        if heap.is_none() {
            *heap = Some(Heap { printable, limit, ..Heap::default() });
            true
        } else {
            false
        }
    });
    struct Close(bool);
    impl Drop for Close {
        fn drop(&mut self) {
            if self.0 {
                // Taken out first, so dropping the maps runs with the cell released.
                let records = HEAP.with(|heap| heap.borrow_mut().take());
                drop(records);
            }
        }
    }
    let _close = Close(opened);
    f()
}

/// Whether any map has changed in this execution.
pub fn any_changed() -> bool {
    HEAP.with(|heap| heap.borrow().as_ref().is_some_and(|h| !h.versions.is_empty()))
}

/// The newest version of `map`.
pub fn latest(map: &MapRef) -> MapRef {
    HEAP.with(|heap| {
        let heap = heap.borrow();
        let Some(heap) = heap.as_ref() else { return map.clone() };
        let mut current = map.clone();
        // Each record points to a map made after it, so the chain ends.
        while let Some((_, newer)) = heap.versions.get(&address(&current)) {
            current = newer.clone();
        }
        current
    })
}

/// Records `newer` as what `map` (in its newest version) now holds. Outside an execution it does
/// nothing: the caller's result is all there is.
pub fn replace(map: &MapRef, newer: MapRef) {
    let current = latest(map);
    if Arc::ptr_eq(&current, &newer) {
        return;
    }
    HEAP.with(|heap| {
        if let Some(heap) = heap.borrow_mut().as_mut() {
            heap.versions.insert(address(&current), (current, newer));
        }
    });
}

/// The measure of a value, or an error when it nests deeper than [`MAX_VALUE_DEPTH`]. Lists and
/// maps are remembered for the execution, so a value built of shared parts (`$x = list $x $x`
/// thirty times) is measured in time proportional to its parts, not to its printed size.
pub fn measure(value: &GoValue) -> Result<Measure, TemplateError> {
    measure_at(value, 0)
}

fn container_address(value: &GoValue) -> Option<usize> {
    match value {
        GoValue::List(items) => Some(items.as_ptr() as usize),
        GoValue::Map(map) => Some(address(map)),
        _ => None,
    }
}

fn measure_at(value: &GoValue, depth: usize) -> Result<Measure, TemplateError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(TemplateError::Exec(format!(
            "a value nests more than {MAX_VALUE_DEPTH} levels deep: templates may not build values that deep"
        )));
    }
    let key = container_address(value);
    if let Some(key) = key {
        let known = HEAP.with(|heap| heap.borrow().as_ref().and_then(|h| h.measured.get(&key).map(|(_, m)| *m)));
        if let Some(known) = known {
            if depth + known.depth > MAX_VALUE_DEPTH {
                return measure_at(&GoValue::Nil, MAX_VALUE_DEPTH + 1);
            }
            return Ok(known);
        }
    }
    let digits = |n: u64| u64::from(n.checked_ilog10().unwrap_or(0)) + 1;
    let mut total = match value {
        GoValue::Nil => Measure { size: 5, depth: 0 },
        GoValue::Bool(_) => Measure { size: 5, depth: 0 },
        GoValue::Int(n) => Measure { size: digits(n.unsigned_abs()) + 1, depth: 0 },
        GoValue::Uint(n) => Measure { size: digits(*n), depth: 0 },
        GoValue::Float(_) => Measure { size: 8, depth: 0 },
        GoValue::String(s) => Measure { size: s.len() as u64, depth: 0 },
        GoValue::Function(_) => Measure { size: 6, depth: 0 },
        GoValue::List(items) => {
            let mut total = Measure { size: 2 + items.len() as u64, depth: 1 };
            for item in items.iter() {
                let inner = measure_at(item, depth + 1)?;
                total.size = total.size.saturating_add(inner.size);
                total.depth = total.depth.max(inner.depth + 1);
            }
            total
        }
        GoValue::Map(map) => {
            let mut total = Measure { size: 5 + 2 * map.len() as u64, depth: 1 };
            for (key, item) in map.iter() {
                let inner = measure_at(item, depth + 1)?;
                total.size = total.size.saturating_add(inner.size).saturating_add(key.len() as u64);
                total.depth = total.depth.max(inner.depth + 1);
            }
            total
        }
    };
    total.size = total.size.max(1);
    if let Some(key) = key {
        HEAP.with(|heap| {
            if let Some(heap) = heap.borrow_mut().as_mut() {
                heap.measured.insert(key, (value.clone(), total));
            }
        });
    }
    Ok(total)
}

/// `RESOLVE value`: the value as the crate reads it: without its Go type's tag
/// ([`typed::plain`](super::typed::plain)), every map in it at its newest version.
pub fn read(args: &[GoValue]) -> Result<GoValue, TemplateError> {
    resolve(&super::typed::plain(args.first().unwrap_or(&GoValue::Nil)))
}

/// `WITH value`: a `with`'s value, which becomes dot: read as [`read`] reads it, but a value
/// that is true keeps its Go type (`{{ with semver "1.2.3" }}{{ . }}` prints `1.2.3`); a false
/// one is read untagged, so that the crate sees it false.
pub fn with(args: &[GoValue]) -> Result<GoValue, TemplateError> {
    let value = args.first().unwrap_or(&GoValue::Nil);
    match super::typed::tagged(value) {
        Some((_, inner)) if inner.is_truthy() => resolve(value),
        _ => read(args),
    }
}

/// `value` with every map in it at its newest version.
pub fn resolve(value: &GoValue) -> Result<GoValue, TemplateError> {
    if !any_changed() {
        return Ok(value.clone());
    }
    resolve_at(value, 0)
}

fn resolve_at(value: &GoValue, depth: usize) -> Result<GoValue, TemplateError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(TemplateError::Exec(format!(
            "a value nests more than {MAX_VALUE_DEPTH} levels deep (a map set into itself?): templates may not \
             build values that deep"
        )));
    }
    match value {
        GoValue::Map(map) => {
            let current = latest(map);
            let mut rebuilt: Option<GoMap> = None;
            for (key, item) in current.iter() {
                let new = resolve_at(item, depth + 1)?;
                if !same(item, &new) {
                    rebuilt.get_or_insert_with(|| (*current).clone()).insert(key.clone(), new);
                }
            }
            Ok(match rebuilt {
                Some(entries) => {
                    let newer = Arc::new(entries);
                    // The rebuilt map is the same Go map: a change made through it is a change of
                    // `map`.
                    replace(&current, newer.clone());
                    GoValue::Map(newer)
                }
                None => GoValue::Map(current),
            })
        }
        GoValue::List(items) => {
            let mut rebuilt: Option<Vec<GoValue>> = None;
            for (i, item) in items.iter().enumerate() {
                let new = resolve_at(item, depth + 1)?;
                if !same(item, &new) {
                    rebuilt.get_or_insert_with(|| items.to_vec())[i] = new;
                }
            }
            Ok(rebuilt.map_or_else(|| value.clone(), |items| GoValue::List(items.into())))
        }
        other => Ok(other.clone()),
    }
}

/// Whether two values are the same allocation (containers) or otherwise unchanged.
fn same(a: &GoValue, b: &GoValue) -> bool {
    match (a, b) {
        (GoValue::Map(a), GoValue::Map(b)) => Arc::ptr_eq(a, b),
        (GoValue::List(a), GoValue::List(b)) => Arc::ptr_eq(a, b),
        _ => true,
    }
}

/// `GET base "a" "b"`: Go's field chain `base.a.b` over the newest versions (a missing key is
/// nil; a field of nil is nil, as the crate has it).
pub fn get(args: &[GoValue]) -> Result<GoValue, TemplateError> {
    use super::typed::{tagged, Type};
    let Some((base, fields)) = args.split_first() else { return Ok(GoValue::Nil) };
    let mut value = base.clone();
    for field in fields {
        let GoValue::String(name) = field else { return Ok(GoValue::Nil) };
        value = match (&value, tagged(&value)) {
            // A semver's fields are its methods without arguments.
            (_, Some((Type::Semver, GoValue::Map(methods)))) => methods
                .get(name.as_ref())
                .cloned()
                .ok_or_else(|| TemplateError::Exec(format!("can't evaluate field {name} in type *semver.Version")))?,
            // Go reads a field of any map with string keys as its key (`(splitn "/" 2 $s)._1`).
            (_, Some((Type::StringMap, GoValue::Map(map)))) => {
                latest(map).get(name.as_ref()).cloned().unwrap_or(GoValue::Nil)
            }
            (_, Some((ty, _))) => {
                return Err(TemplateError::Exec(format!(
                    "can't evaluate field {name} in type {}",
                    super::fmt::tagged_name(ty)
                )))
            }
            (GoValue::Map(map), None) => latest(map).get(name.as_ref()).cloned().unwrap_or(GoValue::Nil),
            (GoValue::Nil, None) => GoValue::Nil,
            (other, None) => {
                return Err(TemplateError::Exec(format!("can't evaluate field {name} in type {}", go_type(other))))
            }
        };
    }
    Ok(value)
}

/// Whether a template may change a map: it names a changing function (or `include`, whose
/// template may).
pub fn may_change(source: &str) -> bool {
    source.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| CHANGING.contains(&word) || word == "include")
}

/// Rewrites a parsed tree: every printed value passes [`PRINTABLE`]; and with `changes` (the
/// template may change a map), every read of a map sees its newest version.
pub fn rewrite(list: &mut ListNode, changes: bool) {
    for node in &mut list.nodes {
        let with = matches!(node, Node::With(_));
        match node {
            Node::List(inner) => rewrite(inner, changes),
            Node::Action(action) => {
                if changes {
                    rewrite_pipe(&mut action.pipe);
                }
                if action.pipe.decl.is_empty() {
                    let pos = action.pipe.pos;
                    action.pipe.commands.push(command(pos, vec![Expr::Identifier(pos, PRINTABLE.into())]));
                }
            }
            Node::If(branch) | Node::With(branch) | Node::Range(branch) => {
                if changes {
                    rewrite_pipe(&mut branch.pipe);
                    let pos = branch.pipe.pos;
                    let name = if with { WITH } else { RESOLVE };
                    branch.pipe.commands.push(command(pos, vec![Expr::Identifier(pos, name.into())]));
                }
                rewrite(&mut branch.body, changes);
                if let Some(other) = &mut branch.else_body {
                    rewrite(other, changes);
                }
            }
            Node::Template(call) => {
                if let (true, Some(pipe)) = (changes, &mut call.pipe) {
                    rewrite_pipe(pipe);
                }
            }
            Node::Define(define) => rewrite(&mut define.body, changes),
            Node::Text(_) | Node::Break(_) | Node::Continue(_) => {}
        }
    }
}

fn command(pos: Pos, args: Vec<Expr>) -> CommandNode {
    CommandNode { pos, args }
}

fn pipe_of(pos: Pos, commands: Vec<CommandNode>) -> PipeNode {
    PipeNode { pos, decl: Vec::new(), commands, is_assign: false }
}

/// A command that calls a field with arguments (`(semver "1.2.3").Compare $v`, or a field a
/// value is piped into) as a call of [`METHOD`]: the receiver, the method's name, the arguments.
fn method_call(cmd: &mut CommandNode, piped: bool) {
    if cmd.args.len() < 2 && !piped {
        return;
    }
    let (pos, base, mut fields) = match cmd.args.first() {
        Some(Expr::Field(pos, fields)) => (*pos, Expr::Dot(*pos), fields.clone()),
        Some(Expr::Variable(pos, name, fields)) if !fields.is_empty() => {
            (*pos, Expr::Variable(*pos, name.clone(), Vec::new()), fields.clone())
        }
        Some(Expr::Chain(pos, inner, fields)) if !matches!(**inner, Expr::Identifier(..)) => {
            (*pos, (**inner).clone(), fields.clone())
        }
        _ => return,
    };
    let Some(name) = fields.pop() else { return };
    let receiver = if fields.is_empty() { base } else { get_call(pos, base, fields) };
    cmd.args[0] = receiver;
    cmd.args.insert(0, Expr::Identifier(pos, METHOD.into()));
    cmd.args.insert(2, Expr::String(pos, Arc::from(name.as_str())));
}

/// `METHOD receiver name args…`: a method call. Template values have methods only where Go's
/// have them and the crate's do not: a semver's (`.Compare`, `.LessThan`); any other receiver
/// is refused as the crate refuses arguments to a field.
pub fn method(args: &[GoValue]) -> Result<GoValue, TemplateError> {
    let (receiver, name) = (args.first().unwrap_or(&GoValue::Nil), args.get(1));
    let (Some(GoValue::String(name)), Some((super::typed::Type::Semver, fields))) =
        (name, super::typed::tagged(receiver))
    else {
        return Err(TemplateError::Exec("can't give argument to non-function <field>".into()));
    };
    super::semver::method(fields, name, args.get(2..).unwrap_or(&[]))
}

fn rewrite_pipe(pipe: &mut PipeNode) {
    let commands = std::mem::take(&mut pipe.commands);
    for (i, mut cmd) in commands.into_iter().enumerate() {
        method_call(&mut cmd, i > 0);
        let builtin = matches!(cmd.args.first(), Some(Expr::Identifier(_, name)) if BUILTINS.contains(&name.as_str()));
        if builtin && i > 0 {
            // The piped value reaches the builtin as its last argument.
            pipe.commands.push(command(cmd.pos, vec![Expr::Identifier(cmd.pos, RESOLVE.into())]));
        }
        // A call's name (or `name.field`, a call whose result's field is read) stays as it is.
        let first_is_call = match cmd.args.first() {
            Some(Expr::Identifier(..)) => true,
            Some(Expr::Chain(_, inner, _)) => matches!(**inner, Expr::Identifier(..)),
            _ => false,
        };
        let args = std::mem::take(&mut cmd.args);
        for (j, arg) in args.into_iter().enumerate() {
            if j == 0 && first_is_call {
                cmd.args.push(arg);
                continue;
            }
            let arg = rewrite_expr(arg);
            cmd.args.push(if builtin { resolved(arg) } else { arg });
        }
        pipe.commands.push(cmd);
    }
}

/// `(RESOLVE arg)`, leaving constants as they are.
fn resolved(arg: Expr) -> Expr {
    match arg {
        Expr::String(..) | Expr::Number(..) | Expr::Bool(..) | Expr::Nil(..) => arg,
        other => {
            let pos = other.pos();
            Expr::Pipe(pos, pipe_of(pos, vec![command(pos, vec![Expr::Identifier(pos, RESOLVE.into()), other])]))
        }
    }
}

fn get_call(pos: Pos, base: Expr, fields: Vec<gotmpl::parse::SmolStr>) -> Expr {
    let mut args = vec![Expr::Identifier(pos, GET.into()), base];
    args.extend(fields.into_iter().map(|f| Expr::String(pos, Arc::from(f.as_str()))));
    Expr::Pipe(pos, pipe_of(pos, vec![command(pos, args)]))
}

fn rewrite_expr(expr: Expr) -> Expr {
    match expr {
        Expr::Field(pos, fields) => get_call(pos, Expr::Dot(pos), fields),
        Expr::Variable(pos, name, fields) if !fields.is_empty() => {
            get_call(pos, Expr::Variable(pos, name, Vec::new()), fields)
        }
        Expr::Chain(pos, inner, fields) => get_call(pos, rewrite_expr(*inner), fields),
        Expr::Pipe(pos, mut pipe) => {
            rewrite_pipe(&mut pipe);
            Expr::Pipe(pos, pipe)
        }
        other => other,
    }
}
