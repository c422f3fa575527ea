use super::*;
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

#[test]
fn seed_examples() {
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
    assert!(err("1 / 0").contains("not a finite number"));
}

#[test]
fn comparisons_and_logic() {
    assert_eq!(ok("1 == 1.0"), json!(true));
    assert_eq!(ok("1 == '1'"), json!(false));
    assert_eq!(ok("nil == nil"), json!(true));
    assert_eq!(ok("'abc' < 'abd'"), json!(true));
    assert_eq!(ok("1 < 2 < 3"), json!(true));
    assert_eq!(ok("3 > 2 > 2"), json!(false));
    assert_eq!(ok("not flag and !false"), json!(true));
    assert_eq!(ok("flag or cluster.enabled"), json!(true));
    assert_eq!(ok("missing && true"), json!(false));
    assert_eq!(ok("!missing"), json!(true));
    assert!(err("1 < 'a'").starts_with("invalid operation: < (mismatched types int and string)"));
    assert!(err("'yes' && true").starts_with("invalid operation: && (mismatched types string and bool)"));
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
    assert_eq!(err("provider = 'aws'"), "unexpected character '=' (1:10)\n | provider = 'aws'\n | .........^");
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
