use super::*;
use crate::doc::Value;
use serde_json::json;

fn env() -> Value {
    json!({
        "provider": "aws",
        "cluster": {"enabled": true, "workers": {"count": 3}, "driver": "talos", "nodes": {"b": 2, "a": 1}},
        "network": {"cidr_block": null},
        "name": "Shop",
        "list": [1, 2, 3],
        "ratio": 2.5,
        "flag": false
    })
}

fn eval(source: &str) -> std::result::Result<Value, String> {
    let expression = Expression::compile(source).map_err(|e| e.render(source))?;
    expression.eval(&env(), &NoFiles, &crate::limits::Budget::default()).map_err(|e| e.render(source))
}

fn ok(source: &str) -> Value {
    eval(source).unwrap_or_else(|e| panic!("{source}: {e}"))
}

fn err(source: &str) -> String {
    match eval(source) {
        Ok(v) => panic!("{source}: expected an error, got {v}"),
        Err(e) => e,
    }
}

/// The expressions of Windsor's features docs ("Feature Definition", "Expression Examples",
/// "Input Evaluation").
#[test]
fn windsor_docs_examples() {
    assert_eq!(ok("provider == 'aws'"), json!(true));
    assert_eq!(ok("provider == 'aws' && cluster.enabled == true"), json!(true));
    assert_eq!(ok("cluster.enabled == true && cluster.driver == 'talos'"), json!(true));
    assert_eq!(ok("(provider == 'aws' || provider == 'azure') && cluster.enabled == true"), json!(true));
    assert_eq!(ok("observability.enabled ?? false"), json!(false));
    assert_eq!(ok("network.cidr_block ?? \"10.0.0.0/16\""), json!("10.0.0.0/16"));
    assert_eq!(ok("cluster.workers.count + 2"), json!(5));
    assert_eq!(ok("cluster.workers.count * 2"), json!(6));
    assert_eq!(ok("cluster.endpoint ?? \"https://localhost:6443\""), json!("https://localhost:6443"));
    assert_eq!(ok("values(cluster.nodes)"), json!([1, 2]));
}

#[test]
fn missing_keys_and_nil_members_are_nil() {
    assert_eq!(ok("nope"), json!(null));
    assert_eq!(ok("nope.deeper.still"), json!(null));
    assert_eq!(ok("nope?.deeper"), json!(null));
    assert_eq!(ok("cluster['workers'][\"count\"]"), json!(3));
    assert_eq!(ok("cluster?.[\"driver\"]"), json!("talos"));
    assert_eq!(ok("list[0] + list[-1]"), json!(4));
    assert!(err("list[3]").starts_with("index out of range: 3 (array length is 3)"));
    assert!(err("provider.x").starts_with("cannot fetch x from string"));
}

#[test]
fn literals() {
    assert_eq!(ok("[1, 'a', nil, true, 2.5]"), json!([1, "a", null, true, 2.5]));
    assert_eq!(ok("{a: 1, 'b c': [2], 3: nil}"), json!({"a": 1, "b c": [2], "3": null}));
    assert_eq!(ok("0x10 + 1_000"), json!(1016));
    assert_eq!(ok("'it\\'s' + \"\\\"q\\\"\""), json!("it's\"q\""));
}

#[test]
fn arithmetic_follows_expr() {
    assert_eq!(ok("7 / 2"), json!(3.5));
    assert_eq!(ok("6 / 2"), json!(3.0));
    assert_eq!(ok("7 % 3"), json!(1));
    assert_eq!(ok("2 ** 3"), json!(8.0));
    assert_eq!(ok("2 ^ 3 ^ 2"), json!(512.0));
    assert_eq!(ok("1 + 2.5"), json!(3.5));
    assert_eq!(ok("-cluster.workers.count"), json!(-3));
    assert_eq!(ok("'a' + 'b'"), json!("ab"));
    assert_eq!(ok("1 + 2 * 3 - 4 / 2"), json!(5.0));
    assert!(err("7.5 % 2").starts_with("invalid operation: %"));
    assert!(err("1 % 0").starts_with("integer divide by zero"));
    assert!(err("'a' + 1").starts_with("invalid operation: + (mismatched types string and int)"));
    assert!(err("provider + 1").starts_with("invalid operation: + (mismatched types string and int); convert"));
    assert!(err("1 / 0").contains("not a finite number"));
}

#[test]
fn comparisons_and_logic() {
    assert_eq!(ok("1 == 1.0"), json!(true));
    assert_eq!(ok("provider == 1"), json!(false));
    assert_eq!(ok("nil == nil"), json!(true));
    assert_eq!(ok("'abc' < 'abd'"), json!(true));
    assert_eq!(ok("1 < 2 < 3"), json!(true));
    assert_eq!(ok("3 > 2 > 2"), json!(false));
    assert_eq!(ok("not flag and !false"), json!(true));
    assert_eq!(ok("flag or cluster.enabled"), json!(true));
    assert_eq!(ok("missing && true"), json!(false));
    assert_eq!(ok("!missing"), json!(true));
    assert!(err("1 < 'a'").starts_with("invalid operation: < (mismatched types int and string)"));
    assert!(err("1 < provider").starts_with("invalid operation: < (mismatched types int and string)"));
    assert!(err("'yes' && true").starts_with("invalid operation: && (mismatched types string and bool)"));
    assert!(err("provider && true").starts_with("invalid operation: && (mismatched types string and bool)"));
}

#[test]
fn membership_and_string_operators() {
    assert_eq!(ok("2 in list"), json!(true));
    assert_eq!(ok("'driver' in cluster"), json!(true));
    assert_eq!(ok("'x' not in cluster"), json!(true));
    assert_eq!(ok("1 in nope"), json!(false));
    assert_eq!(ok("name matches '^S.o'"), json!(true));
    assert_eq!(ok("name matches ('^' + 'x')"), json!(false));
    assert_eq!(ok("name contains 'ho' && name startsWith 'Sh' && name endsWith 'op'"), json!(true));
    assert_eq!(ok("nope contains 'x'"), json!(false));
    assert!(err("name matches '('").starts_with("error parsing regexp"));
}

#[test]
fn ternary_and_coalesce() {
    assert_eq!(ok("cluster.enabled ? 'on' : 'off'"), json!("on"));
    assert_eq!(ok("flag ? 1 : flag ? 2 : 3"), json!(3));
    assert_eq!(ok("nope ?: 'fallback'"), json!("fallback"));
    assert_eq!(ok("nope ?? other ?? 'last'"), json!("last"));
    assert_eq!(ok("1 + nope ?? 2"), json!(3));
    assert_eq!(ok("(nope ?? false) || true"), json!(true));
}

#[test]
fn coalesce_may_not_mix_without_parentheses() {
    let e = err("foo ?? bar || baz");
    assert!(
        e.starts_with(
            "Operator (||) and coalesce expressions (??) cannot be mixed. Wrap either by parentheses. (1:12)"
        ),
        "{e}"
    );
}

#[test]
fn functions() {
    assert_eq!(ok("len(list) + len('héllo') + len(cluster)"), json!(12));
    assert_eq!(ok("lower('AbC') + upper('x') + trim('  y ') + trim('xxzxx', 'x')"), json!("abcXyz"));
    assert_eq!(ok("split('a,b,c', ',')"), json!(["a", "b", "c"]));
    assert_eq!(ok("split('a,b,c', ',', 2)"), json!(["a", "b,c"]));
    assert_eq!(ok("join(['a', 'b'], '-') + join(['c'])"), json!("a-bc"));
    assert_eq!(ok("keys(cluster.nodes)"), json!(["a", "b"]));
    assert_eq!(ok("abs(-2) + abs(-1.5)"), json!(3.5));
    assert_eq!(ok("int(2.9) + int('4')"), json!(6));
    assert_eq!(ok("float(2) + float('0.5')"), json!(2.5));
    assert_eq!(ok("string(2.0) + string(nil) + string([1, 'a']) + string(1e6)"), json!("2<nil>[1 a]1e+06"));
    assert!(err("int('3.5')").starts_with("invalid operation: int(3.5)"));
    assert!(err("len(1)").starts_with("invalid argument for len (type int)"));
    assert!(err("nosuch(1)").starts_with("unknown func nosuch"));
    assert!(err("len(1, 2)").starts_with("invalid number of arguments (expected 1, got 2)"));
    assert!(err("file('x')").contains("not available"));
}

#[test]
fn errors_show_the_column_with_a_caret() {
    assert_eq!(err("a +"), "unexpected token EOF (1:3)\n | a +\n | ..^");
    assert_eq!(err("provider = 'aws'"), "unexpected token Operator(\"=\") (1:10)\n | provider = 'aws'\n | .........^");
    assert!(err("'open").starts_with("literal not terminated (1:1)"));
    assert!(err("").starts_with("expression is empty"));
    assert!(err("a b").starts_with("unexpected token Identifier(\"b\") (1:3)"));
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(err(&deep).starts_with("expression is nested more than"));
    let unary = format!("{}true", "!".repeat(10_000));
    assert!(err(&unary).starts_with("expression is nested more than"));
}

#[test]
fn identifiers_for_explain() {
    let expression = Expression::compile("provider == 'aws' && (cluster.enabled ?? false) && len(list) > 0");
    assert_eq!(
        expression.map(|e| e.identifiers()).ok(),
        Some(vec!["provider".into(), "cluster.enabled".into(), "list".into()])
    );
}

#[test]
fn text_forms() {
    assert_eq!(to_text(&json!(null)), "");
    assert_eq!(to_text(&json!(3.0)), "3");
    assert_eq!(to_text(&json!(0.1)), "0.1");
    assert_eq!(to_text(&json!({"a": [1, "b"]})), r#"{"a":[1,"b"]}"#);
}

#[test]
fn go_float_formatting() {
    for (f, expected) in [
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (2.5, "2.5"),
        (-3.0, "-3"),
    ] {
        assert_eq!(go_format(&json!(f)), expected, "{f}");
    }
}

/// The first line of a compile error, `message (line:col)`; panics when `source` compiles.
fn compile_error(source: &str) -> String {
    match Expression::compile(source) {
        Ok(_) => panic!("{source}: expected a compile error"),
        Err(e) => e.render(source).lines().next().unwrap_or_default().to_string(),
    }
}

#[test]
fn slices_follow_expr() {
    // expr_test.go TestExpr (ArrayOfInt = [1..5], String = "string") and TestEval_slices_out_of_bound.
    let env = json!({"a": [1, 2, 3, 4, 5], "s": "string", "u": "héllo", "m": {"a": 1}, "n": null});
    let run = |source: &str| {
        let expression = Expression::compile(source).map_err(|e| e.render(source))?;
        expression.eval(&env, &NoFiles, &crate::limits::Budget::default()).map_err(|e| e.render(source))
    };
    for (source, expected) in [
        ("a[1:2]", json!([2])),
        ("a[1:4]", json!([2, 3, 4])),
        ("a[-4:-1]", json!([2, 3, 4])),
        ("a[:3]", json!([1, 2, 3])),
        ("a[3:]", json!([4, 5])),
        ("a[0:5] == a && a[0:] == a && a[:5] == a && a[:] == a", json!(true)),
        ("s[:]", json!("string")),
        ("s[:3]", json!("str")),
        ("s[:9]", json!("string")),
        ("s[3:9]", json!("ing")),
        ("s[7:9]", json!("")),
        ("'hello'[1:3]", json!("el")),
        ("[1, 2, 3][:99]", json!([1, 2, 3])),
        ("[1, 2, 3][99:]", json!([])),
        ("[1, 2, 3][:-99]", json!([])),
        ("[1, 2, 3][-99:]", json!([1, 2, 3])),
        ("a[3:1]", json!([])),
        ("a[1.9:3.5]", json!([2, 3])),
        ("a?.[1:3][0]", json!(2)),
        ("len(a[1:])", json!(4)),
        // By byte, as in expr: `é` is two bytes.
        ("u[1:3]", json!("é")),
        ("u[3:]", json!("llo")),
        ("s[0]", json!(115)),
        ("u[-1]", json!(111)),
    ] {
        assert_eq!(run(source), Ok(expected), "{source}");
    }
    for (source, expected) in [
        ("n[1:]", "invalid argument for len (type <nil>) (1:2)"),
        ("n[:1]", "cannot slice 0 (1:2)"),
        ("m[1:2]", "cannot slice 1 (1:2)"),
        ("a[n:]", "invalid operation: int(<nil>) (1:2)"),
        ("a['x':]", "invalid operation: int(string) (1:2)"),
        (
            "u[0:2]",
            "slice [0:2] cuts a multi-byte character of the string (strings are sliced by byte, as in expr) (1:2)",
        ),
        ("a[5]", "index out of range: 5 (array length is 5) (1:2)"),
    ] {
        let got = run(source).map_err(|e| e.lines().next().unwrap_or_default().to_string());
        assert_eq!(got, Err(expected.to_string()), "{source}");
    }
}

#[test]
fn slices_parse_as_in_expr() {
    for (source, expected) in [
        ("list[1:2:3]", "unexpected token Operator(\":\") (1:9)"),
        ("list[]", "unexpected token Bracket(\"]\") (1:6)"),
        ("list[1:", "unexpected token EOF (1:7)"),
        ("nil[1:]", "unexpected token Bracket(\"[\") (1:4)"),
        ("1[0]", "unexpected token Bracket(\"[\") (1:2)"),
        ("true.a", "unexpected token Operator(\".\") (1:5)"),
    ] {
        assert_eq!(compile_error(source), expected, "{source}");
    }
}

#[test]
fn type_errors_from_literals_are_compile_errors() {
    // Checked against expr v1.17.6's checker (checker_test.go TestCheck_error and its rules).
    for (source, expected) in [
        ("\"3\" == 3", "invalid operation: == (mismatched types string and int) (1:5)"),
        ("1 + 'a'", "invalid operation: + (mismatched types int and string) (1:3)"),
        ("1 /* one */ + \"2\"", "invalid operation: + (mismatched types int and string) (1:13)"),
        ("!'x'", "invalid operation: ! (mismatched type string) (1:1)"),
        ("not 1", "invalid operation: not (mismatched type int) (1:1)"),
        ("-'a'", "invalid operation: - (mismatched type string) (1:1)"),
        ("'a' && true", "invalid operation: && (mismatched types string and bool) (1:5)"),
        ("1 and false", "invalid operation: and (mismatched types int and bool) (1:3)"),
        ("true or 0", "invalid operation: or (mismatched types bool and int) (1:6)"),
        ("nil && true", "invalid operation: && (mismatched types unknown and bool) (1:5)"),
        ("x && 1", "invalid operation: && (mismatched types unknown and int) (1:3)"),
        ("1.5 % 2", "invalid operation: % (mismatched types float64 and int) (1:5)"),
        ("1 < 2 < 'a'", "invalid operation: < (mismatched types int and string) (1:7)"),
        ("'abc'[1]", "type string[int] is undefined (1:6)"),
        ("'abc'.a", "type string has no field a (1:7)"),
        ("(nil).Foo", "type nil has no field Foo (1:7)"),
        ("(nil)['Foo']", "type nil has no field Foo (1:6)"),
        ("[1, 2]['a']", "array elements can only be selected using an integer (got string) (1:8)"),
        ("{a: 1}[0]", "cannot use int to get an element from map[string]interface {} (1:8)"),
        ("42 in ['a', 'b']", "cannot use int as type string in array (1:4)"),
        ("1 in {a: 1}", "cannot use int as type string in map key (1:3)"),
        ("'str' in 'string'", "invalid operation: in (mismatched types string and string) (1:7)"),
        ("'a' not in [1]", "cannot use string as type int in array (1:9)"),
        ("1 ? 2 : 3", "non-bool expression (type int) used as condition (1:1)"),
        ("nil ? 1 : 2", "non-bool expression (type unknown) used as condition (1:1)"),
        ("[1, 2][0] + 'a'", "invalid operation: + (mismatched types int and string) (1:11)"),
        ("(true ? 1 : 2) + 'a'", "invalid operation: + (mismatched types int and string) (1:16)"),
        ("len('abc') + 'a'", "invalid operation: + (mismatched types int and string) (1:12)"),
        ("{a: 1}.a && 1", "invalid operation: && (mismatched types interface {} and int) (1:10)"),
        ("'abc'[1.5:]", "non-integer slice index float64 (1:7)"),
        ("[1, 2][:'b']", "non-integer slice index string (1:9)"),
        ("{a: 1}[1:]", "cannot slice map[string]interface {} (1:7)"),
        ("(true)[:]", "cannot slice bool (1:7)"),
        ("[1, 2, 3][1:2] + 1", "invalid operation: + (mismatched types []interface {} and int) (1:16)"),
        ("len(42)", "invalid argument for len (type int) (1:1)"),
        ("len(nil)", "invalid argument for len (type %!s(<nil>)) (1:1)"),
        ("len(1, 2)", "invalid number of arguments (expected 1, got 2) (1:1)"),
        ("keys('a')", "cannot get keys from string (1:1)"),
        ("lower(1)", "cannot use int as argument (type string) to call lower  (1:7)"),
        ("lower(nil)", "cannot use nil as argument (type string) to call lower (1:7)"),
        ("lower()", "not enough arguments to call lower (1:1)"),
        ("trim('a', 'b', 'c')", "too many arguments to call trim (1:1)"),
        ("split('a,b', ',', 1.5)", "cannot use float64 as argument (type int) to call split  (1:19)"),
        ("join(1, 1 + 'a')", "invalid operation: + (mismatched types int and string) (1:11)"),
        ("lower(true ? 1 : 2)", "cannot use int as argument (type string) to call lower  (1:19)"),
    ] {
        assert_eq!(compile_error(source), expected, "{source}");
    }
}

#[test]
fn what_expr_accepts_still_compiles() {
    for source in [
        "1 == 1.0",
        "nil == 1",
        "'a' == nil",
        "x == 'a'",
        "x + 1",
        "x && true",
        "!x",
        "x ? 1 : 2",
        "x.y[1:]",
        "x[1 + 'a':]",
        "1 + 2.5 < 3",
        "[1, 2] == [1]",
        "'a' in ['a', 1]",
        "nil in ['a']",
        "1 ?? 'a'",
        "(true ? 'a' : 1) + 1",
        "[1, x][0] + 'a'",
        "{a: 1}.a + 'a'",
        "true ? 1 : 'a'",
        "split('a,b', ',', 2)",
        "join(['a'])",
        "string(nil) + abs(x)",
    ] {
        assert!(Expression::compile(source).is_ok(), "{source}: {:?}", Expression::compile(source).err());
    }
}

#[test]
fn windsor_value_functions_are_typed() {
    let value = |source: &str| match Expression::compile_value(source) {
        Ok(_) => String::new(),
        Err(e) => e.render(source).lines().next().unwrap_or_default().to_string(),
    };
    // Windsor declares split(string, string) []any, file(string) string, jsonnet(string) any.
    assert_eq!(value("split('a', 'b', 1)"), "too many arguments to call split (1:1)");
    assert_eq!(value("file('a') + 1"), "invalid operation: + (mismatched types string and int) (1:11)");
    assert_eq!(value("file(1)"), "cannot use int as argument (type string) to call file  (1:6)");
    assert_eq!(value("jsonnet('a').b + 1"), "");
    assert_eq!(value("split('a,b', ',')[0] + 1"), "");
    // `when` knows neither; ours reads files there too, unchecked.
    assert!(Expression::compile("file(1 + 'a')").is_ok());
    assert_eq!(compile_error("file()"), "invalid number of arguments (expected 1, got 0) (1:1)");
}

/// Windsor v0.9.0's `cidrhost` (pkg/runtime/evaluator/evaluator.go `evaluateCidrHostFunction`,
/// cases of evaluator_private_test.go).
#[test]
fn cidrhost_follows_windsor() {
    let value = |source: &str| {
        let expression = Expression::compile_value(source).map_err(|e| e.render(source))?;
        expression.eval(&env(), &NoFiles, &crate::limits::Budget::default()).map_err(|e| e.render(source))
    };
    assert_eq!(value("cidrhost('10.5.0.0/16', 10)"), Ok(json!("10.5.0.10")));
    assert_eq!(value("cidrhost('10.5.0.0/16', 266)"), Ok(json!("10.5.1.10")));
    assert_eq!(value("cidrhost('10.5.3.7/16', 1)"), Ok(json!("10.5.0.1")));
    assert_eq!(value("cidrhost('fd00::/64', 5)"), Ok(json!("fd00::5")));
    assert!(value("cidrhost('10.0.0.0/30', 4)").is_err_and(|e| e.contains("out of range (0-3)")));
    assert!(value("cidrhost('nonsense', 1)").is_err_and(|e| e.contains("invalid CIDR prefix")));
    // v0.8.1's conditions do not have it.
    assert!(Expression::compile("cidrhost('10.5.0.0/16', 1) == ''").is_err());
}

/// expr-lang v1.17.8's builtin/builtin_test.go `TestBuiltin` cases for the builtins and
/// predicates Windsor expressions call (expr-lang/expr, MIT).
#[test]
fn expr_builtins_and_predicates() {
    let cases: [(&str, Value); 40] = [
        ("ceil(5.5)", json!(6.0)),
        ("floor(5)", json!(5.0)),
        ("round(5.49)", json!(5.0)),
        ("trimPrefix(\"prefix_foo\", \"prefix_\")", json!("foo")),
        ("trimSuffix(\"foo_suffix\", \"_suffix\")", json!("foo")),
        ("repeat(\"foo\", 3)", json!("foofoofoo")),
        ("indexOf(\"foo,bar,baz\", \",\")", json!(3)),
        ("lastIndexOf(\"foo,bar,baz\", \",\")", json!(7)),
        ("hasPrefix(\"foo,bar,baz\", \"foo\")", json!(true)),
        ("max(1, 2, 3)", json!(3)),
        ("max([1, 2, 4, 10], 20, [29, 23, -19])", json!(29)),
        ("min([1, 2, 4, 10], 20, [29, 23, -19])", json!(-19)),
        ("min(-1, [1.5, 2.5, 3.5])", json!(-1)),
        ("max(1.5, 2.5, 3.5)", json!(3.5)),
        ("sum(1..9)", json!(45)),
        ("sum([])", json!(0)),
        ("sum([1, 2, 3.0, 4])", json!(10.0)),
        ("mean(1..9)", json!(5.0)),
        ("mean([])", json!(0.0)),
        ("first([])", json!(null)),
        ("last(list)", json!(3)),
        ("get(list, -1)", json!(3)),
        ("get(list, 99)", json!(null)),
        ("get({foo: 1, bar: 2}, \"unknown\")", json!(null)),
        ("take(list, 2)", json!([1, 2])),
        ("take(list, 99)", json!([1, 2, 3])),
        ("fromPairs(toPairs({foo: 1, bar: 2}))", json!({"foo": 1, "bar": 2})),
        ("toPairs({foo: 1, bar: 2})", json!([["bar", 2], ["foo", 1]])),
        ("concat([1, 2], [3])", json!([1, 2, 3])),
        ("flatten([1, [2, [3]]])", json!([1, 2, 3])),
        ("uniq([1, 2, 1.0, 'a', 'a'])", json!([1, 2, "a"])),
        ("reverse(list)", json!([3, 2, 1])),
        ("groupBy(1..5, # % 2)", json!({"0": [2, 4], "1": [1, 3, 5]})),
        ("map(list, # * 2)", json!([2, 4, 6])),
        ("filter(1..9, {# % 3 == 0})", json!([3, 6, 9])),
        ("reduce(1..9, #acc + #)", json!(45)),
        ("reduce(1..3, concat(#acc, [# * #index]), [])", json!([0, 2, 6])),
        ("all(list, # > 0) && any(list, # > 2) && none(list, # > 3) && one(list, # == 2)", json!(true)),
        ("findIndex(list, # > 1) + findLastIndex(list, # > 1) + count(list, # > 1)", json!(5)),
        ("sortBy([{n: 2}, {n: 1}], .n, 'desc')", json!([{"n": 2}, {"n": 1}])),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source), expected, "{source}");
    }
    // Windsor's windsorcli/core (contexts/_template/facets) shapes: nested closures, pairs.
    assert_eq!(
        ok("fromPairs(map(filter(toPairs(cluster.nodes), get(#, 1) > 1), [get(#, 0) + '-x', get(#, 1)]))"),
        json!({"b-x": 2})
    );
    assert_eq!(ok("map(1..2, map(1..2, #))"), json!([[1, 2], [1, 2]]));
    assert!(err("# + 1").contains("cannot use pointer accessor outside predicate"));
    assert!(err("filter(list, # + 1)").contains("predicate of filter must return bool"));
    assert!(err("map(3, #)").contains("cannot iterate over int"));
}

/// expr-lang's `let` and `;` sequences (expr v1.17.8: parser/parser_test.go, expr_test.go,
/// checker/checker_test.go).
#[test]
fn let_bindings_follow_expr() {
    let ok = |source: &str| {
        Expression::compile_value(source).map(|e| e.eval(&env(), &NoFiles, &crate::limits::Budget::default()))
    };
    let value = |source: &str| match ok(source) {
        Ok(Ok(value)) => value,
        other => panic!("{source}: {other:?}"),
    };
    let compile_error = |source: &str| match Expression::compile_value(source) {
        Err(err) => err.render(source),
        Ok(_) => panic!("{source} compiled"),
    };
    assert_eq!(value("let x = 1; x + 2"), json!(3));
    assert_eq!(value("map(1..3, let x = #; let y = x * x; y * y)"), json!([1, 16, 81]));
    assert_eq!(value("let x = 1; let y = 2; 3; 4; x + y"), json!(3));
    assert_eq!(value("let x = (1; 2; 3); x"), json!(3));
    assert_eq!(value("let x = true ? 1 : (2; 3; 4); x"), json!(1));
    assert_eq!(value("1; 2;"), json!(2));
    // The value sees the environment; the name shadows it in the body only.
    assert_eq!(value("let provider = provider + '-x'; provider"), json!("aws-x"));
    assert_eq!(value("(let n = 2; n * 2) + len(name)"), json!(8));
    assert_eq!(value("filter(list, {let limit = 1; # > limit})"), json!([2, 3]));
    assert_eq!(value("let nodes = cluster.nodes; nodes.a + nodes?.b"), json!(3));
    // core's talos_common_docker shape: nested lets, a ternary body, a map literal.
    assert_eq!(
        value("let host = 6; let quota = cluster.workers.count; host <= quota ? '' : string(max(500, (host - quota) * 1000 + 500)) + 'm'"),
        json!("3500m")
    );
    assert_eq!(
        compile_error("let foo = 1; let foo = 2; foo"),
        "cannot redeclare variable foo (1:18)\n | let foo = 1; let foo = 2; foo\n | .................^"
    );
    assert_eq!(
        compile_error("let map = 42; map"),
        "cannot redeclare builtin map (1:5)\n | let map = 42; map\n | ....^"
    );
    assert_eq!(
        compile_error("let len = 42; len"),
        "cannot redeclare builtin len (1:5)\n | let len = 42; len\n | ....^"
    );
    assert!(compile_error("let env = 1; env").starts_with("cannot redeclare function env (1:5)"));
    assert!(
        compile_error("let x = 1 x").starts_with("unexpected token Number(\"1\")")
            || compile_error("let x = 1 x").contains("unexpected token")
    );
    assert!(compile_error("filter(list, # > 1; true)").starts_with("wrap predicate with brackets { and }"));
    // A bare closure that is a `let` takes the sequence after it as its body, as in expr.
    assert_eq!(value("filter(list, let a = 1; # > a)"), json!([2, 3]));
    // A Feature's when (expr's builtins only) has no `file` function to clash with.
    assert!(Expression::compile("let file = 1; file == 1").is_ok());
}

/// Windsor v0.9's `env`, `yaml`, `yamlString`, `jsonString` (windsorcli/cli v0.9.0,
/// pkg/runtime/evaluator/evaluator.go and evaluator_helpers_test.go).
#[test]
fn windsor_v09_text_helpers() {
    struct Files;
    impl Host for Files {
        fn file(&self, path: &str) -> Result<String, String> {
            match path {
                "data.yaml" => Ok("key: value\nfoo: bar".into()),
                "patch.yaml" => Ok("name: ${input.name}\nprovider: ${provider}\n".into()),
                _ => Err(format!("no {path}")),
            }
        }
        fn jsonnet(&self, path: &str) -> Result<Value, String> {
            Err(path.into())
        }
        fn env(&self, name: &str) -> Option<String> {
            match name {
                "TOKEN" => Some("s3cr3t".into()),
                "EMPTY" => Some(String::new()),
                _ => None,
            }
        }
    }
    let value = |source: &str| {
        let expression = Expression::compile_value(source).map_err(|e| e.render(source))?;
        expression.eval(&env(), &Files, &crate::limits::Budget::default()).map_err(|e| e.render(source))
    };
    assert_eq!(value("env('TOKEN')"), Ok(json!("s3cr3t")));
    assert_eq!(value("env('ABSENT') ?? 'fallback'"), Ok(json!("fallback")));
    assert_eq!(value("env('EMPTY') ?? 'fallback'"), Ok(json!("")));
    assert!(value("env(42)").is_err_and(|e| e.starts_with("cannot use int as argument (type string) to call env")));
    assert_eq!(value("yaml('data.yaml')"), Ok(json!({"key": "value", "foo": "bar"})));
    assert_eq!(value("yaml('a: 1\\nb: 2')"), Ok(json!({"a": 1, "b": 2})));
    assert_eq!(value("yaml('p: q')"), Ok(json!({"p": "q"})));
    assert_eq!(value("yaml('- a\\n- b\\n- c')"), Ok(json!(["a", "b", "c"])));
    assert_eq!(value("yaml('- controlplane_labels: foo\\n  other: bar').controlplane_labels"), Ok(json!("foo")));
    assert_eq!(value("yaml('patch.yaml', {name: 'n1'})"), Ok(json!({"name": "n1", "provider": "aws"})));
    assert!(value("yaml('missing.yaml')").is_err_and(|e| e.starts_with("yaml() file not found: missing.yaml")));
    assert!(value("yaml('a: b', {})").is_err_and(|e| e.starts_with("yaml() file not found: a: b")));
    assert!(value("yaml('not: valid: yaml: [\\n')").is_err_and(|e| e.starts_with("yaml() failed to parse")));
    assert!(value("yaml(42)").is_err_and(|e| e.starts_with("cannot use int as argument (type string) to call yaml")));
    assert!(value("yaml('a', 'b', 'c')").is_err_and(|e| e.starts_with("yaml() requires 1 or 2 arguments, got 3")));
    assert_eq!(value("yamlString(cluster.nodes)"), Ok(json!("a: 1\nb: 2\n")));
    assert_eq!(value("yamlString('patch.yaml', {name: 'n1'})"), Ok(json!("name: n1\nprovider: aws\n")));
    assert_eq!(value("yamlString('plain ${input}', 'x')"), Ok(json!("plain x")));
    assert!(value("yamlString()").is_err());
    assert!(value("yamlString('a', 'b', 'c')").is_err());
    assert_eq!(value("jsonString({b: '<x>', a: 1})"), Ok(json!(r#"{"a":1,"b":"\u003cx\u003e"}"#)));
    assert_eq!(
        value("jsonString(['/var/mnt/longhorn', '/var/mnt/data'])"),
        Ok(json!(r#"["/var/mnt/longhorn","/var/mnt/data"]"#))
    );
    assert!(value("jsonString('a', 'b')").is_err());
    // A Feature's when (v0.8.1) has none of them.
    for source in ["env('A') == ''", "yaml('a: 1') == nil", "jsonString(1) == ''"] {
        assert!(Expression::compile(source).is_err_and(|e| e.message.contains("is Windsor v0.9's")), "{source}");
    }
}
