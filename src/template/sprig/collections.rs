//! Sprig's list and dict functions. `set`, `unset`, `merge` and `mergeOverwrite` change the map
//! they are given, as in Go: every holder of the map sees the change. A change that would put a
//! map inside itself is refused (Go's own overflows its stack printing it). The `must` variants
//! are the same functions: where Sprig's plain variant panics, Go's template reports the panic as
//! the call's error, in the same words.

use super::convert::{check_size, deep_equal, empty, strval_within, to_i64, Meter};
use crate::template::go::fmt::{kind_of, type_of};
use crate::template::go::value::entry_bytes;
use crate::template::go::value::MAX_VALUE_DEPTH;
use crate::template::go::{
    self, define, Args, Arity::AtLeast, Arity::Exact, Elem, FuncMap, GoMap, GoValue, MapRef, TemplateError,
};
use std::collections::HashMap;

pub fn register(funcs: &mut FuncMap) {
    for name in ["list", "tuple"] {
        define(funcs, name, AtLeast(0), |args| Ok(go::list(args.rest(0).to_vec())));
    }
    for name in ["append", "push", "mustAppend", "mustPush"] {
        define(funcs, name, Exact(2), |args| {
            let mut items = slice(args, 0, "Cannot push on type")?.to_vec();
            items.push(args.any(1).clone());
            Ok(go::list(items))
        });
    }
    for name in ["prepend", "mustPrepend"] {
        define(funcs, name, Exact(2), |args| {
            let items = slice(args, 0, "Cannot prepend on type")?;
            Ok(go::list(std::iter::once(args.any(1).clone()).chain(items.iter().cloned()).collect()))
        });
    }
    for name in ["first", "mustFirst"] {
        define(funcs, name, Exact(1), |args| {
            Ok(slice(args, 0, "Cannot find first on type")?.first().cloned().unwrap_or(GoValue::Nil))
        });
    }
    for name in ["last", "mustLast"] {
        define(funcs, name, Exact(1), |args| {
            Ok(slice(args, 0, "Cannot find last on type")?.last().cloned().unwrap_or(GoValue::Nil))
        });
    }
    for name in ["rest", "mustRest"] {
        define(funcs, name, Exact(1), |args| {
            Ok(match slice(args, 0, "Cannot find rest on type")? {
                // Sprig returns nil for an empty list.
                [] => go::nil_list(),
                [_, rest @ ..] => go::list(rest.to_vec()),
            })
        });
    }
    for name in ["initial", "mustInitial"] {
        define(funcs, name, Exact(1), |args| {
            Ok(match slice(args, 0, "Cannot find initial on type")? {
                // Sprig returns nil for an empty list.
                [] => go::nil_list(),
                [initial @ .., _] => go::list(initial.to_vec()),
            })
        });
    }
    for name in ["reverse", "mustReverse"] {
        define(funcs, name, Exact(1), |args| {
            Ok(go::list(slice(args, 0, "Cannot find reverse on type")?.iter().rev().cloned().collect()))
        });
    }
    for name in ["uniq", "mustUniq"] {
        define(funcs, name, Exact(1), uniq);
    }
    for name in ["without", "mustWithout"] {
        define(funcs, name, AtLeast(1), |args| {
            let omit = args.rest(1);
            let items = slice(args, 0, "Cannot find without on type")?;
            let mut meter = Meter::new(args);
            let mut kept = Vec::new();
            for item in items {
                if !any_equal(omit.iter(), item, &mut meter)? {
                    kept.push(item.clone());
                }
            }
            Ok(go::list(kept))
        });
    }
    for name in ["has", "mustHas"] {
        define(funcs, name, Exact(2), |args| {
            if matches!(args.any(1), GoValue::Nil) {
                return Ok(GoValue::Bool(false));
            }
            // Sprig compares with reflect.DeepEqual: an int64 is not the list's int.
            let needle = args.any(0);
            match args.any(1) {
                GoValue::List(items) => Ok(GoValue::Bool(any_equal(items.iter(), needle, &mut Meter::new(args))?)),
                other => Err(go::fail(args.name(), format!("Cannot find has on type {}", kind_of(other)))),
            }
        });
    }
    for name in ["compact", "mustCompact"] {
        define(funcs, name, Exact(1), |args| {
            let items = slice(args, 0, "Cannot compact on type")?;
            Ok(go::list(items.iter().filter(|item| !empty(item)).cloned().collect()))
        });
    }
    for name in ["slice", "mustSlice"] {
        define(funcs, name, AtLeast(1), |args| {
            let items = slice(args, 0, "list should be type of slice or array but")?;
            let GoValue::List(list) = args.any(0) else { return Ok(GoValue::Nil) };
            if items.is_empty() {
                return Ok(GoValue::Nil);
            }
            let indices = args.rest(1);
            let start = indices.first().map_or(0, to_i64);
            let end = indices.get(1).map_or(items.len() as i64, to_i64);
            if start < 0 || end < start || end > items.len() as i64 {
                return Err(go::fail(args.name(), "reflect.Value.Slice: slice index out of bounds"));
            }
            // reflect's Slice: the list's own type.
            Ok(GoValue::List(list.with_items(items[start as usize..end as usize].to_vec())))
        });
    }
    define(funcs, "concat", AtLeast(0), |args| {
        let mut all = Vec::new();
        for (i, list) in args.rest(0).iter().enumerate() {
            match list {
                GoValue::List(items) => all.extend(items.iter().cloned()),
                GoValue::Nil => return Err(nil_dereference(args)),
                other => return Err(go::fail(args.name(), format!("Cannot concat type {} as list", kind_of(other)))),
            }
            check_size(args, all.len().saturating_mul(16)).map_err(|_| too_long(args, i))?;
        }
        // Go appends to a nil slice: an empty concatenation is that nil slice.
        Ok(if all.is_empty() { go::nil_list() } else { go::list(all) })
    });
    for name in ["chunk", "mustChunk"] {
        define(funcs, name, Exact(2), |args| {
            let size = args.int(0)?;
            let items = slice(args, 1, "Cannot chunk type")?;
            let size = match usize::try_from(size) {
                Ok(size) if size > 0 => size,
                _ => return Err(go::fail(args.name(), "runtime error: makeslice: len out of range")),
            };
            Ok(go::typed_list(items.chunks(size).map(|chunk| go::list(chunk.to_vec())).collect(), Elem::List))
        });
    }
    define(funcs, "dig", AtLeast(0), dig);
    // Dicts.
    define(funcs, "dict", AtLeast(0), |args| {
        let mut map = GoMap::new();
        for pair in args.rest(0).chunks(2) {
            let value = pair.get(1).cloned().unwrap_or_else(|| go::string(""));
            map.insert(strval_within(args, &pair[0])?.into(), value);
        }
        Ok(go::map(map))
    });
    define(funcs, "get", Exact(2), |args| {
        let key = args.string(1)?;
        Ok(args.map(0)?.get(key).cloned().unwrap_or_else(|| go::string("")))
    });
    define(funcs, "set", Exact(3), |args| {
        let key = args.string(1)?;
        let value = args.any(2);
        let mut meter = Meter::new(args);
        if let GoValue::Map(map) = args.any(0) {
            refuse_inside(value, &[map], &mut meter)?;
        }
        meter.build(entry_bytes(key))?;
        change(args, |map| {
            map.insert(key.into(), value.clone());
        })
    });
    define(funcs, "unset", Exact(2), |args| {
        let key = args.string(1)?;
        change(args, |map| {
            map.remove(key);
        })
    });
    define(funcs, "hasKey", Exact(2), |args| Ok(GoValue::Bool(args.map(0)?.contains_key(args.string(1)?))));
    define(funcs, "pluck", AtLeast(1), |args| {
        let key = args.string(0)?;
        let mut found = Vec::new();
        for i in 1..args.len() {
            if let Some(value) = args.map(i)?.get(key) {
                found.push(value.clone());
            }
        }
        Ok(go::list(found))
    });
    define(funcs, "keys", AtLeast(0), |args| {
        let mut keys = Vec::new();
        for i in 0..args.len() {
            keys.extend(args.map(i)?.keys().map(|key| GoValue::String(key.clone())));
        }
        Ok(go::typed_list(keys, Elem::String))
    });
    define(funcs, "values", Exact(1), |args| Ok(go::list(args.map(0)?.values().cloned().collect())));
    define(funcs, "pick", AtLeast(1), |args| {
        let map = args.map(0)?;
        let mut picked = GoMap::new();
        for i in 1..args.len() {
            let key = args.string(i)?;
            if let Some((key, value)) = map.get_key_value(key) {
                picked.insert(key.clone(), value.clone());
            }
        }
        Ok(go::map(picked))
    });
    define(funcs, "omit", AtLeast(1), |args| {
        let mut map: GoMap = args.map(0)?.clone();
        for i in 1..args.len() {
            map.remove(args.string(i)?);
        }
        Ok(go::map(map))
    });
    for name in ["merge", "mustMerge"] {
        define(funcs, name, AtLeast(1), |args| merge(args, false));
    }
    for name in ["mergeOverwrite", "mustMergeOverwrite"] {
        define(funcs, name, AtLeast(1), |args| merge(args, true));
    }
}

/// Sprig's `uniq`: the items without those `reflect.DeepEqual` to an earlier one. Scalars are
/// looked up in a set; lists, maps and versions are compared with each earlier one, as Sprig
/// does, each comparison charged.
fn uniq(args: &Args<'_>) -> Result<GoValue, TemplateError> {
    #[derive(PartialEq, Eq, Hash)]
    enum Key<'a> {
        Nil,
        Bool(bool),
        Int(i64),
        Int64(i64),
        Uint(u64),
        Float(u64),
        String(&'a str),
    }
    let items = slice(args, 0, "Cannot find uniq on type")?;
    let mut meter = Meter::new(args);
    let mut unique: Vec<GoValue> = Vec::new();
    let mut scalars = std::collections::HashSet::new();
    let mut others: Vec<&GoValue> = Vec::new();
    for item in items {
        let key = match item {
            GoValue::Nil => Some(Key::Nil),
            GoValue::Bool(b) => Some(Key::Bool(*b)),
            GoValue::Int(n) => Some(Key::Int(*n)),
            GoValue::Int64(n) => Some(Key::Int64(*n)),
            GoValue::Uint(n) => Some(Key::Uint(*n)),
            // NaN equals nothing, itself included; -0 equals 0.
            GoValue::Float(f) if f.is_nan() => None,
            GoValue::Float(f) => Some(Key::Float(if *f == 0.0 { 0 } else { f.to_bits() })),
            GoValue::String(s) => Some(Key::String(s)),
            GoValue::List(_) | GoValue::Map(_) | GoValue::Semver(_) => {
                if !any_equal(others.iter().copied(), item, &mut meter)? {
                    others.push(item);
                    unique.push(item.clone());
                }
                continue;
            }
        };
        if key.is_none_or(|key| scalars.insert(key)) {
            unique.push(item.clone());
        }
    }
    Ok(go::list(unique))
}

/// Whether any of `values` is `reflect.DeepEqual` to `item` (each comparison metered: a list
/// compared with a list is quadratic, as Sprig's is).
fn any_equal<'v>(
    values: impl IntoIterator<Item = &'v GoValue>,
    item: &GoValue,
    meter: &mut Meter<'_>,
) -> Result<bool, TemplateError> {
    for value in values {
        if deep_equal(value, item, meter)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A list argument where Sprig accepts any slice; anything else is Sprig's error for it.
fn slice<'a>(args: &Args<'a>, i: usize, cannot: &str) -> Result<&'a [GoValue], TemplateError> {
    match args.any(i) {
        GoValue::List(items) => Ok(items),
        GoValue::Nil => Err(nil_dereference(args)),
        other => Err(go::fail(args.name(), format!("{cannot} {}", kind_of(other)))),
    }
}

/// What Go reports when Sprig asks a nil argument for its type.
fn nil_dereference(args: &Args<'_>) -> TemplateError {
    go::fail(args.name(), "runtime error: invalid memory address or nil pointer dereference")
}

fn too_long(args: &Args<'_>, i: usize) -> TemplateError {
    go::fail(args.name(), format!("the lists up to argument {} hold too many items to join", i + 1))
}

/// Sprig's `dig "a" "b" default dict`: the value at a path of keys, or the default.
fn dig(args: &Args<'_>) -> Result<GoValue, TemplateError> {
    if args.len() < 3 {
        return Err(go::fail(args.name(), "dig needs at least three arguments"));
    }
    let conversion = |value: &GoValue, want: &str| {
        go::fail(args.name(), format!("interface conversion: interface {{}} is {}, not {want}", type_of(value)))
    };
    let keys = &args.rest(0)[..args.len() - 2];
    let default = args.any(args.len() - 2);
    let mut current = args.any(args.len() - 1).clone();
    for (i, key) in keys.iter().enumerate() {
        let GoValue::String(key) = key else { return Err(conversion(key, "string")) };
        let GoValue::Map(map) = &current else { return Err(conversion(&current, "map[string]interface {}")) };
        match map.get(key.as_ref()) {
            None => return Ok(default.clone()),
            Some(value) if i + 1 == keys.len() => return Ok(value),
            Some(value) => current = value,
        }
    }
    Ok(default.clone())
}

/// Changes the map argument 0 in place, as Go's map assignment does, and returns it. Go cannot
/// assign into a nil map.
fn change(args: &Args<'_>, edit: impl FnOnce(&mut GoMap)) -> Result<GoValue, TemplateError> {
    match args.any(0) {
        GoValue::Map(map) if !map.is_strings() => {
            edit(&mut map.write());
            Ok(GoValue::Map(map.clone()))
        }
        // Go panics assigning into a nil map; deleting from one or merging into one (mergo's
        // error, which Sprig swallows) leaves it nil, which prints as an empty map.
        GoValue::Nil if args.name() == "set" => Err(go::fail(args.name(), "assignment to entry in nil map")),
        GoValue::Nil => Ok(go::map(GoMap::new())),
        _ => args.map(0).map(|_| GoValue::Nil),
    }
}

/// Refuses to put `value` into a map when it holds one of `held` (the map, and the maps a merge
/// is changing around it: Go's own would overflow its stack printing the result), or nests so deep
/// that the map would nest deeper than values may be built.
fn refuse_inside(value: &GoValue, held: &[&MapRef], meter: &mut Meter<'_>) -> Result<(), TemplateError> {
    let facts = facts(value, held, &mut HashMap::new(), 1, meter)?;
    if facts.holds {
        return Err(TemplateError::Exec(format!(
            "a value nests more than {MAX_VALUE_DEPTH} levels deep (a map set into itself?): templates may not build \
             values that deep"
        )));
    }
    if facts.height >= MAX_VALUE_DEPTH {
        return Err(TemplateError::Exec(format!(
            "a value nests more than {MAX_VALUE_DEPTH} levels deep: templates may not build values that deep"
        )));
    }
    Ok(())
}

/// What matters of a value about to be put into a map: whether it holds one of the maps, and how
/// many levels of lists and maps it has.
#[derive(Clone, Copy, Default)]
struct Facts {
    holds: bool,
    height: usize,
}

/// [`Facts`] of `value` at `depth`, each list and map looked at once (a value built of shared
/// parts is walked in time proportional to its parts). A held map is compared before it is read:
/// its lock is taken.
fn facts(
    value: &GoValue,
    held: &[&MapRef],
    known: &mut HashMap<usize, Facts>,
    depth: usize,
    meter: &mut Meter<'_>,
) -> Result<Facts, TemplateError> {
    let address = match value {
        GoValue::Map(inner) if held.iter().any(|map| inner.ptr_eq(map)) => return Ok(Facts { holds: true, height: 1 }),
        GoValue::Map(inner) => inner.address(),
        GoValue::List(items) => items.address(),
        _ => return Ok(Facts::default()),
    };
    if depth > MAX_VALUE_DEPTH {
        return Ok(Facts { holds: false, height: MAX_VALUE_DEPTH + 1 });
    }
    if let Some(found) = known.get(&address) {
        return Ok(*found);
    }
    let mut found = Facts { holds: false, height: 1 };
    let children: Vec<GoValue> = match value {
        GoValue::Map(inner) => inner.read().values().filter(|v| v.is_container()).cloned().collect(),
        GoValue::List(items) => items.iter().filter(|v| v.is_container()).cloned().collect(),
        _ => Vec::new(),
    };
    meter.visit(match value {
        GoValue::Map(inner) => inner.len(),
        GoValue::List(items) => items.len(),
        _ => 0,
    })?;
    for child in &children {
        let child = facts(child, held, known, depth + 1, meter)?;
        found.holds |= child.holds;
        found.height = found.height.max(child.height + 1);
    }
    known.insert(address, found);
    Ok(found)
}

/// Sprig's `merge`/`mergeOverwrite`: mergo's deep merge into the first map, which changes in
/// place (and so do the maps nested in it that receive entries).
fn merge(args: &Args<'_>, overwrite: bool) -> Result<GoValue, TemplateError> {
    // The sources as they are now (a source may be the destination, or share maps with it).
    let mut sources: Vec<GoMap> = Vec::new();
    for i in 1..args.len() {
        sources.push(args.map(i)?.clone());
    }
    let mut failed = None;
    let mut meter = Meter::new(args);
    let result = match args.any(0) {
        GoValue::Map(dst) if !dst.is_strings() => {
            let held = [dst];
            change(args, |entries| {
                for src in &sources {
                    if let Err(err) = merge_into(entries, src, (args.name(), overwrite), &held, &mut meter) {
                        failed = Some(err);
                        return;
                    }
                }
            })?
        }
        _ => change(args, |_| {})?,
    };
    match failed {
        Some(err) => Err(err),
        None => Ok(result),
    }
}

/// mergo's rules (v0.3, as Sprig 3.2 uses it), key by key: a nil source value is copied only
/// when overwriting; maps on both sides merge deeply, the destination's map changing in place;
/// a source map never replaces a non-empty destination value; otherwise the source value is
/// taken when overwriting or when the destination's is missing or empty. `held` are the maps
/// being changed, the outermost first: what is put into `dst` may hold none of them.
fn merge_into(
    dst: &mut GoMap,
    src: &GoMap,
    (name, overwrite): (&str, bool),
    held: &[&MapRef],
    meter: &mut Meter<'_>,
) -> Result<(), TemplateError> {
    if held.len() > crate::limits::MAX_DEPTH {
        let depth = crate::limits::MAX_DEPTH;
        return Err(go::fail(name, format!("the maps nest more than {depth} levels deep")));
    }
    meter.visit(src.len())?;
    for (key, value) in src {
        if matches!(value, GoValue::Nil) {
            if overwrite {
                meter.build(entry_bytes(key))?;
                dst.insert(key.clone(), GoValue::Nil);
            }
            continue;
        }
        if let (Some(GoValue::Map(into)), GoValue::Map(from)) = (dst.get(key), value) {
            if !into.ptr_eq(from) && !into.is_strings() {
                // A map being changed is not read (its lock is taken): merging one into a map
                // inside it is refused as a map set into itself.
                if held.iter().any(|map| map.ptr_eq(from)) {
                    refuse_inside(value, held, meter)?;
                }
                let from: GoMap = from.read().clone();
                let mut inner: Vec<&MapRef> = held.to_vec();
                inner.push(into);
                merge_into(&mut into.write(), &from, (name, overwrite), &inner, meter)?;
            }
        }
        let existing = dst.get(key);
        if existing.is_some_and(|e| !empty(e)) && matches!(value, GoValue::Map(_)) {
            continue;
        }
        if overwrite || existing.is_none_or(empty) {
            refuse_inside(value, held, meter)?;
            meter.build(entry_bytes(key))?;
            dst.insert(key.clone(), value.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{expect, expect_err, run_with};
    use crate::template::go::GoValue;

    #[test]
    fn lists() {
        // list_test.go: TestTuple, TestList, TestPush, TestPrepend, TestFirst, TestLast, TestRest,
        // TestInitial, TestReverse, TestUniq, TestWithout, TestHas, TestCompact, TestSlice,
        // TestConcat, TestChunk.
        expect(&[
            (r#"{{ $t := tuple 1 "a" "foo" }}{{ index $t 2 }}{{ index $t 0 }}{{ index $t 1 }}"#, "foo1a"),
            (r#"{{ $t := list 1 "a" "foo" }}{{ index $t 2 }}{{ index $t 0 }}{{ index $t 1 }}"#, "foo1a"),
            (r#"{{ $t := push (list 1 2 3) 4 }}{{ len $t }}"#, "4"),
            (r#"{{ append (list 1 2 3) 4 }}{{ prepend (list 1 2 3) 0 }}"#, "[1 2 3 4][0 1 2 3]"),
            (
                r#"{{ list 1 2 3 | first }}{{ list | first }}|{{ list 1 2 3 | last }}{{ list | last }}"#,
                "1<no value>|3<no value>",
            ),
            (r#"{{ list 1 2 3 | rest }}{{ list | rest }}{{ list 1 2 3 | initial }}"#, "[2 3][][1 2]"),
            (r#"{{ list 1 2 3 | reverse }}{{ list | reverse }}"#, "[3 2 1][]"),
            (r#"{{ list 1 2 3 2 1 "a" "a" | uniq }}"#, "[1 2 3 a]"),
            (r#"{{ without (list 1 2 3 4) 1 3 }}{{ without (list 1 2) 3 }}"#, "[2 4][1 2]"),
            (r#"{{ list 1 2 3 | has 1 }}{{ list 1 2 3 | has 4 }}{{ has 1 .Nothing }}"#, "truefalsefalse"),
            (r#"{{ list 1 0 "" "hello" | compact }}"#, "[1 hello]"),
            (
                r#"{{ slice (list 1 2 3) }}{{ slice (list 1 2 3) 1 }}{{ slice (list 1 2 3) 1 2 }}{{ slice list }}"#,
                "[1 2 3][2 3][2]<no value>",
            ),
            (r#"{{ concat (list 1 2) (list 3 4) (list) }}"#, "[1 2 3 4]"),
            (
                r#"{{ chunk 2 (list 1 2 3 4 5) }}{{ chunk 5 (list 1 2) }}{{ chunk 2 list }}"#,
                "[[1 2] [3 4] [5]][[1 2]][]",
            ),
        ]);
        expect_err(&[
            (r#"{{ first "abc" }}"#, "error calling first: Cannot find first on type string"),
            (r#"{{ mustPush 1 2 }}"#, "error calling mustPush: Cannot push on type int"),
            (r#"{{ first .Nothing }}"#, "nil pointer dereference"),
            (r#"{{ slice (list 1 2) 1 5 }}"#, "slice index out of bounds"),
            (r#"{{ concat (list 1) "x" }}"#, "Cannot concat type string as list"),
            (r#"{{ chunk 0 (list 1) }}"#, "makeslice: len out of range"),
        ]);
    }

    #[test]
    fn dicts() {
        // dict_test.go: TestDict, TestUnset, TestSet, TestGet, TestHasKey, TestPluck, TestKeys,
        // TestPick, TestOmit, TestValues, TestDig, TestMerge, TestMergeOverwrite.
        expect(&[
            (
                r#"{{ $d := dict 1 2 "three" "four" 5 }}{{ range $k, $v := $d }}{{ $k }}{{ $v }}{{ end }}"#,
                "125threefour",
            ),
            (
                r#"{{ $d := dict "one" 1 "two" 222222 }}{{ $d = unset $d "two" }}{{ range $k, $v := $d }}{{ $k }}{{ end }}"#,
                "one",
            ),
            (r#"{{ $d := dict "one" 1 }}{{ $d = set $d "two" 2 }}{{ $d.two }} {{ len $d }}"#, "2 2"),
            (r#"{{ $d := dict "one" 1 "two" 2 }}{{ get $d "one" }}|{{ get $d "three" }}|"#, "1||"),
            (r#"{{ $d := dict "one" 1 }}{{ hasKey $d "one" }}{{ hasKey $d "two" }}"#, "truefalse"),
            (r#"{{ $d := dict "one" 1 "two" 2 }}{{ $e := dict "one" 11 }}{{ pluck "one" $d $e }}"#, "[1 11]"),
            (r#"{{ keys (dict "b" 1 "a" 2) (dict "c" 3) }}{{ values (dict "b" 1 "a" 2) }}"#, "[a b c][2 1]"),
            (
                r#"{{ pick (dict "a" 1 "b" 2 "c" 3) "a" "c" "x" }}{{ omit (dict "a" 1 "b" 2 "c" 3) "a" "c" }}"#,
                "map[a:1 c:3]map[b:2]",
            ),
            (r#"{{ dict "a" (dict "b" (dict "c" 1)) | dig "a" "b" "c" "x" }}|{{ dict "a" 1 | dig "z" "x" }}"#, "1|x"),
            (r#"{{ dict "a" | toJson }}"#, r#"{"a":""}"#),
        ]);
        expect_err(&[
            (r#"{{ dig "a" (dict) }}"#, "dig needs at least three arguments"),
            (
                r#"{{ dict "a" 1 | dig "a" "b" "x" }}"#,
                "interface conversion: interface {} is int, not map[string]interface {}",
            ),
            (r#"{{ get "x" "y" }}"#, "expected map[string]interface {}; got string"),
        ]);
        // dict_test.go TestMerge and TestMergeOverwrite, on the same data.
        let data: serde_json::Value = serde_json::json!({
            "dst": {"a": "one", "c": 3, "d": {"f": 5}, "g": [8, 9], "i": "eye", "k": {"l": true}},
            "src1": {"a": 1, "b": 2, "d": {"e": "four"}, "g": [6, 7], "i": "aye", "j": "jay", "k": {"l": false}},
            "src2": {"h": 10, "i": "i", "j": "j"},
        });
        let data: GoValue = crate::template::go::to_go(&data);
        assert_eq!(
            run_with("{{ merge .dst .src1 .src2 | toJson }}", &data).as_deref(),
            Ok(r#"{"a":"one","b":2,"c":3,"d":{"e":"four","f":5},"g":[8,9],"h":10,"i":"eye","j":"jay","k":{"l":true}}"#)
        );
        assert_eq!(
            run_with("{{ mergeOverwrite .dst .src1 .src2 | toJson }}", &data).as_deref(),
            Ok(r#"{"a":1,"b":2,"c":3,"d":{"e":"four","f":5},"g":[6,7],"h":10,"i":"i","j":"j","k":{"l":false}}"#)
        );
    }
}
