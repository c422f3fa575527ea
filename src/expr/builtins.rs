//! The builtins, one row each (name, whose it is, arity, function), as jaq-std lists its own.
//! Their order is the one the parser's "unknown func" message lists them in: Windsor's and
//! expr-lang's typed functions, expr-lang's other builtins, then its predicates.

use super::arity::Arity::{self, Any, AtLeast, Between, Exactly, Leading, Named};
use super::functions as f;
use super::predicates as p;
use super::scope::Kind::{self, Expr, ExprAndWindsor, Predicate, Windsor, WindsorValue};
use super::scope::{Builtin, Run};
use super::yaml;

const fn row(name: &'static str, kind: Kind, arity: Arity, run: Run) -> Builtin {
    Builtin { name, kind, arity, run }
}

use Run::{Closure, Sized, Values};

#[rustfmt::skip]
pub static TABLE: [Builtin; 65] = [
    row("len", Expr, Exactly(1), Sized(f::len)),
    row("lower", Expr, Exactly(1), Values(f::lower)),
    row("upper", Expr, Exactly(1), Values(f::upper)),
    row("trim", Expr, Between(1, 2), Values(f::trim)),
    row("split", ExprAndWindsor, Between(2, 3), Values(f::split)),
    row("join", Expr, Between(1, 2), Values(f::join)),
    row("keys", Expr, Exactly(1), Values(f::keys)),
    row("values", Expr, Exactly(1), Values(f::keys)),
    row("abs", Expr, Exactly(1), Sized(f::abs)),
    row("int", Expr, Exactly(1), Sized(f::int)),
    row("float", Expr, Exactly(1), Sized(f::to_float)),
    row("string", ExprAndWindsor, Exactly(1), Values(f::string)),
    row("file", Windsor, Exactly(1), Sized(f::file)),
    row("jsonnet", Windsor, Exactly(1), Sized(f::jsonnet)),
    row("toJSON", Expr, Exactly(1), Values(f::to_json)),
    row("cidrhost", WindsorValue, Exactly(2), Values(f::cidr)),
    row("cidrsubnet", WindsorValue, Exactly(3), Values(f::cidr)),
    row("cidrsubnets", WindsorValue, AtLeast(2), Values(f::cidr)),
    row("cidrnetmask", WindsorValue, Exactly(1), Values(f::cidr)),
    row("terraform_output", WindsorValue, Named(&["component", "key"]), Values(f::terraform_output)),
    row("env", WindsorValue, Exactly(1), Values(f::env)),
    row("yaml", WindsorValue, Between(1, 2), Sized(yaml::yaml)),
    row("yamlString", WindsorValue, Between(1, 2), Sized(yaml::yaml_string)),
    row("jsonString", WindsorValue, Exactly(1), Values(f::json_string)),
    row("secret", WindsorValue, Named(&["vault", "item", "field"]), Values(f::secret)),
    row("max", Expr, Any, Values(f::max)),
    row("min", Expr, Any, Values(f::max)),
    row("floor", Expr, Exactly(1), Values(f::floor)),
    row("ceil", Expr, Exactly(1), Values(f::floor)),
    row("round", Expr, Exactly(1), Values(f::floor)),
    row("get", Expr, Leading(2), Values(f::get)),
    row("take", Expr, Exactly(2), Values(f::take)),
    row("concat", Expr, AtLeast(1), Values(f::concat)),
    row("toPairs", Expr, Exactly(1), Values(f::to_pairs)),
    row("fromPairs", Expr, Exactly(1), Values(f::from_pairs)),
    row("trimPrefix", Expr, Any, Values(f::trim_prefix)),
    row("trimSuffix", Expr, Any, Values(f::trim_prefix)),
    row("first", Expr, Any, Values(f::first)),
    row("last", Expr, Any, Values(f::last)),
    row("flatten", Expr, Any, Values(f::flatten)),
    row("uniq", Expr, Any, Values(f::uniq)),
    row("reverse", Expr, Any, Values(f::reverse)),
    row("hasPrefix", Expr, Any, Values(f::has_prefix)),
    row("hasSuffix", Expr, Any, Values(f::has_suffix)),
    row("indexOf", Expr, Any, Values(f::index_of)),
    row("lastIndexOf", Expr, Any, Values(f::index_of)),
    row("replace", Expr, Any, Values(f::replace)),
    row("repeat", Expr, Any, Values(f::repeat)),
    row("type", Expr, Any, Values(f::type_of)),
    row("mean", Expr, Any, Values(f::mean)),
    row("all", Predicate, Exactly(2), Closure(p::quantifier)),
    row("none", Predicate, Exactly(2), Closure(p::quantifier)),
    row("any", Predicate, Exactly(2), Closure(p::quantifier)),
    row("one", Predicate, Exactly(2), Closure(p::quantifier)),
    row("filter", Predicate, Exactly(2), Closure(p::filter)),
    row("map", Predicate, Exactly(2), Closure(p::map)),
    row("count", Predicate, Between(1, 2), Closure(p::count)),
    row("sum", Predicate, Between(1, 2), Closure(p::sum)),
    row("find", Predicate, Exactly(2), Closure(p::find)),
    row("findIndex", Predicate, Exactly(2), Closure(p::find)),
    row("findLast", Predicate, Exactly(2), Closure(p::find)),
    row("findLastIndex", Predicate, Exactly(2), Closure(p::find)),
    row("groupBy", Predicate, Exactly(2), Closure(p::group_by)),
    row("sortBy", Predicate, Between(2, 3), Closure(p::sort_by)),
    row("reduce", Predicate, Between(2, 3), Closure(p::reduce)),
];
