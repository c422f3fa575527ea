//! Windsor v0.9 config blocks (windsorcli/cli v0.9.0, pkg/composer/blueprint/processor.go
//! `mergeFacetScopeIntoGlobal`, `mergeConfigBlocks`, `evaluateGlobalScopeConfig`,
//! `scopeForConfigBlock`, `scopeBlindToBlockKeys`; config_block_order.go).
//!
//! A block `name: x, value: …` makes `x` a name every expression can read, over the context's
//! values. Same-name blocks of one facet merge in list order; across facets the higher ordinal
//! wins, then remove > replace > merge, and equal ones merge. Values are evaluated once all
//! facets of a round are merged, blocks in dependency order, each seeing the others and its own
//! keys.

use super::merge::deep_merge_maps;
use super::model::Strategy;
use crate::doc::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// What evaluates `${…}` for the blocks (compiled once per text by the caller).
pub(super) trait Eval {
    /// Every string of `value` interpolated against `scope` (Windsor's `EvaluateMap`/`Evaluate`).
    fn value(&self, value: &Value, scope: &Value) -> Result<Value, String>;
    /// The paths `${…}` in `text` read, and those read inside function arguments.
    fn reads(&self, text: &str) -> (Vec<String>, Vec<String>);
}

/// The rank of the block that holds a name.
#[derive(Clone, Copy)]
pub(super) struct Held {
    ordinal: i64,
    strategy: Strategy,
}

/// Windsor's `strategyPrecedence`.
fn precedence(strategy: Strategy) -> u8 {
    match strategy {
        Strategy::Merge => 1,
        Strategy::Replace => 2,
        Strategy::Remove => 3,
    }
}

/// One facet's included blocks of one name, combined: maps deep-merged in list order, else the
/// last; the last block's strategy and ordinal.
pub(super) struct Incoming {
    pub name: String,
    pub ordinal: i64,
    pub strategy: Strategy,
    pub value: Value,
}

/// Same-name included blocks of one facet combined (`mergeFacetScopeIntoGlobal`), in first-seen order.
pub(super) fn combine_facet_blocks(blocks: Vec<Incoming>) -> Vec<Incoming> {
    let mut out: Vec<Incoming> = Vec::new();
    let mut bodies: Vec<Vec<Value>> = Vec::new();
    for block in blocks {
        match out.iter().position(|b| b.name == block.name) {
            Some(i) => {
                bodies[i].push(block.value);
                (out[i].ordinal, out[i].strategy) = (block.ordinal, block.strategy);
            }
            None => {
                bodies.push(vec![block.value]);
                out.push(Incoming { value: Value::Null, ..block });
            }
        }
    }
    for (block, values) in out.iter_mut().zip(bodies) {
        block.value = if values.iter().all(Value::is_object) {
            values.into_iter().reduce(|a, b| Value::Object(merge_map(object(a), object(b)))).unwrap_or_default()
        } else {
            values.into_iter().last().unwrap_or_default()
        };
    }
    out
}

fn object(value: Value) -> Map {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Windsor's `deepMergeMap`: maps by key, anything else replaced (no emptiness rule).
fn merge_map(mut base: Map, overlay: Map) -> Map {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(into)), Value::Object(from)) => {
                let merged = merge_map(std::mem::take(into), from);
                *into = merged;
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
    base
}

/// Windsor's `mergeConfigBlocks`: a lower ordinal, or an equal one of lower precedence, is
/// ignored; otherwise remove deletes the name, replace sets it, merge deep-merges maps (else sets).
pub(super) fn merge_blocks(global: &mut Map, held: &mut BTreeMap<String, Held>, incoming: Vec<Incoming>) {
    for block in incoming {
        if let Some(prev) = held.get(&block.name) {
            if block.ordinal < prev.ordinal
                || (block.ordinal == prev.ordinal && precedence(block.strategy) < precedence(prev.strategy))
            {
                continue;
            }
        }
        held.insert(block.name.clone(), Held { ordinal: block.ordinal, strategy: block.strategy });
        match block.strategy {
            Strategy::Remove => {
                global.remove(&block.name);
            }
            Strategy::Replace => {
                global.insert(block.name, block.value);
            }
            Strategy::Merge => match (global.get_mut(&block.name), block.value) {
                (Some(Value::Object(into)), Value::Object(from)) => {
                    let merged = merge_map(std::mem::take(into), from);
                    *into = merged;
                }
                (_, value) => {
                    global.insert(block.name, value);
                }
            },
        }
    }
}

/// Windsor's `scopeBlindToBlockKeys`: the scope a block's `when` sees, where the keys the block
/// writes read as the context's values, so a "default only when unset" guard tests what the
/// operator set, not what the block wrote in an earlier round.
pub(super) fn blind_scope(scope: &Value, context: &Value, name: &str, value: &Value) -> Option<Value> {
    if value.is_null() {
        return None;
    }
    let mut guard = scope.clone();
    let Value::Object(map) = &mut guard else { return None };
    let context_value = context.get(name);
    match value {
        Value::Object(keys) => {
            let mut block = map.get(name).and_then(Value::as_object).cloned().unwrap_or_default();
            for key in keys.keys() {
                match context_value.and_then(|c| c.get(key)) {
                    Some(v) => {
                        block.insert(key.clone(), v.clone());
                    }
                    None => {
                        block.remove(key);
                    }
                }
            }
            map.insert(name.to_string(), Value::Object(block));
        }
        _ => match context_value {
            Some(v) => {
                map.insert(name.to_string(), v.clone());
            }
            None => {
                map.remove(name);
            }
        },
    }
    Some(guard)
}

/// The context with the config over it, kept current one name at a time (merging the whole of
/// both for every block would cost the size of the values per block and pass).
struct Scope(Value);

impl Scope {
    fn new(context: &Map, global: &Map) -> Self {
        Scope(Value::Object(deep_merge_maps(context.clone(), global.clone())))
    }

    /// Sets or removes `name` (the scope is always a mapping: [`Scope::new`] makes one).
    fn put(&mut self, name: &str, value: Option<Value>) {
        if let Value::Object(map) = &mut self.0 {
            match value {
                Some(value) => {
                    map.insert(name.to_string(), value);
                }
                None => {
                    map.remove(name);
                }
            }
        }
    }

    /// Windsor's `scopeForConfigBlock`: the block itself is its in-progress value over the
    /// context's (or the context's alone, or absent). [`Scope::settle`] undoes it.
    fn for_block(&mut self, context: &Map, name: &str, current: Option<&Value>) -> &Value {
        let entry = match (current, context.get(name)) {
            (Some(Value::Object(block)), Some(Value::Object(ctx))) => {
                Some(Value::Object(deep_merge_maps(ctx.clone(), block.clone())))
            }
            (Some(value), _) => Some(value.clone()),
            (None, Some(ctx)) if !ctx.is_null() => Some(ctx.clone()),
            (None, _) => None,
        };
        self.put(name, entry);
        &self.0
    }

    /// The merged entry of `name` again, after the block was written to `global`.
    fn settle(&mut self, context: &Map, global: &Map, name: &str) {
        let one =
            |from: &Map| from.get(name).map(|v| Map::from_iter([(name.to_string(), v.clone())])).unwrap_or_default();
        let mut merged = deep_merge_maps(one(context), one(global));
        self.put(name, merged.remove(name));
    }
}

fn has_expression(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("${"),
        Value::Array(items) => items.iter().any(has_expression),
        Value::Object(map) => map.values().any(has_expression),
        _ => false,
    }
}

fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) if s.contains("${") => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn head(path: &str) -> &str {
    path.split('.').next().unwrap_or(path)
}

/// config_block_order.go's `topoSortConfigBlocks`: each block after those it reads,
/// alphabetical among the ready ones; a cycle is an error naming the blocks in it.
fn order(global: &Map, eval: &dyn Eval) -> Result<Vec<String>, String> {
    let names: BTreeSet<&str> = global.keys().map(String::as_str).collect();
    let mut needs: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (name, value) in global {
        let mut texts = Vec::new();
        strings(value, &mut texts);
        let reads = texts.iter().flat_map(|t| eval.reads(t).0).collect::<Vec<_>>();
        let set: BTreeSet<&str> = reads
            .iter()
            .filter_map(|path| names.get(head(path)).copied())
            .filter(|other| *other != name.as_str())
            .collect();
        needs.insert(name.as_str(), set);
    }
    let mut done: Vec<String> = Vec::new();
    let mut left: BTreeSet<&str> = names.clone();
    while !left.is_empty() {
        let ready = left.iter().copied().find(|n| needs[n].iter().all(|d| !left.contains(d)));
        let Some(ready) = ready else {
            let stuck: Vec<&str> = left.into_iter().collect();
            return Err(format!("circular reference among config blocks: {}", stuck.join(", ")));
        };
        left.remove(ready);
        done.push(ready.to_string());
    }
    Ok(done)
}

/// Windsor's `expressionIsDerivedFromBlock`: the text passes the block itself to a function
/// (`${string(block.patch)}`); such a key is kept as written and evaluated where it is read.
fn derived(text: &str, name: &str, eval: &dyn Eval) -> bool {
    text.contains("${") && eval.reads(text).1.iter().any(|p| head(p) == name)
}

/// Windsor's `evaluateGlobalScopeConfig`: blocks in dependency order, each re-evaluated until
/// it settles (5 passes at most) and all of them until none changes (5 rounds at most); then
/// every key is checked against the final scope, and the first failure is the error.
pub(super) fn evaluate(global: &mut Map, context: &Map, eval: &dyn Eval) -> Result<(), String> {
    let names = order(global, eval)?;
    let mut scope = Scope::new(context, global);
    for _round in 0..5 {
        let mut changed = false;
        for name in &names {
            let Some(body) = global.get(name).cloned() else { continue };
            let Value::Object(body) = body else {
                if !has_expression(&body) {
                    continue;
                }
                let value = eval.value(&body, scope.for_block(context, name, None));
                let value = value.map_err(|e| format!("config block {name:?}: {e}"))?;
                changed |= value != body;
                global.insert(name.clone(), value);
                scope.settle(context, global, name);
                continue;
            };
            if body.is_empty() {
                continue;
            }
            let derived_keys: Map = body
                .iter()
                .filter(|(_, v)| v.as_str().is_some_and(|s| derived(s, name, eval)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let plain: Map = body
                .iter()
                .filter(|(k, _)| !derived_keys.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let mut current = body.clone();
            let mut previous: Option<Map> = None;
            for pass in 0..5 {
                let own = Value::Object(current.clone());
                let view = scope.for_block(context, name, (pass > 0).then_some(&own));
                // Tolerant: a key that fails keeps its text, for a later pass to resolve.
                let mut evaluated: Map =
                    plain.iter().map(|(k, v)| (k.clone(), eval.value(v, view).unwrap_or_else(|_| v.clone()))).collect();
                let settled =
                    previous.as_ref() == Some(&evaluated) && !has_expression(&Value::Object(evaluated.clone()));
                previous = Some(evaluated.clone());
                evaluated.extend(derived_keys.clone());
                current = evaluated;
                if settled {
                    break;
                }
            }
            // Keys still holding `${…}` are tried once more against the block as it now is.
            for _ in 0..3 {
                let mut resolved_any = false;
                let keys: Vec<String> = current.keys().cloned().collect();
                for key in keys {
                    let Some(Value::String(text)) = current.get(&key) else { continue };
                    if !text.contains("${") || derived_keys.contains_key(&key) {
                        continue;
                    }
                    let text = Value::String(text.clone());
                    let own = Value::Object(current.clone());
                    let Ok(resolved) = eval.value(&text, scope.for_block(context, name, Some(&own))) else {
                        continue;
                    };
                    if resolved.is_null() || current.get(&key) == Some(&resolved) {
                        continue;
                    }
                    current.insert(key, resolved);
                    resolved_any = true;
                }
                if !resolved_any {
                    break;
                }
            }
            changed |= current != body;
            global.insert(name.clone(), Value::Object(current));
            scope.settle(context, global, name);
        }
        if !changed {
            break;
        }
    }
    // What still fails against the final scope is a mistake, not a sibling still resolving.
    for name in &names {
        let Some(Value::Object(block)) = global.get(name) else { continue };
        let check: Map = block
            .iter()
            .filter(|(_, v)| !v.as_str().is_some_and(|s| derived(s, name, eval)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let own = Value::Object(block.clone());
        let result = eval.value(&Value::Object(check), scope.for_block(context, name, Some(&own)));
        result.map_err(|e| format!("config block {name:?}: {e}"))?;
        scope.settle(context, global, name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(name: &str, ordinal: i64, strategy: Strategy, value: Value) -> Incoming {
        Incoming { name: name.into(), ordinal, strategy, value }
    }

    /// windsorcli/cli v0.9.0 processor_test.go `TestProcessor_mergeConfigBlocks` cases: higher
    /// ordinal wins, equal ordinals go by remove > replace > merge, equal merges deep-merge.
    #[test]
    fn merge_follows_ordinal_then_strategy() {
        let mut global = Map::new();
        let mut held = BTreeMap::new();
        merge_blocks(&mut global, &mut held, vec![block("a", 100, Strategy::Merge, json!({"x": 1, "n": {"p": 1}}))]);
        merge_blocks(&mut global, &mut held, vec![block("a", 100, Strategy::Merge, json!({"y": 2, "n": {"q": 2}}))]);
        assert_eq!(global["a"], json!({"x": 1, "y": 2, "n": {"p": 1, "q": 2}}));
        // A lower ordinal is ignored, a lower precedence at the same ordinal too.
        merge_blocks(&mut global, &mut held, vec![block("a", 50, Strategy::Replace, json!({"z": 3}))]);
        merge_blocks(&mut global, &mut held, vec![block("a", 100, Strategy::Replace, json!({"r": 1}))]);
        assert_eq!(global["a"], json!({"r": 1}));
        merge_blocks(&mut global, &mut held, vec![block("a", 100, Strategy::Merge, json!({"m": 1}))]);
        assert_eq!(global["a"], json!({"r": 1}));
        merge_blocks(&mut global, &mut held, vec![block("a", 100, Strategy::Remove, json!({}))]);
        assert!(!global.contains_key("a"));
    }

    /// processor_test.go `ScalarConfigBlockDoesNotCorruptLaterMapBlockMerge` and
    /// `ResolvesSameNameConfigByWhenWhenMatchingBlockIsFirstInList`: same-name blocks of one facet
    /// deep-merge when all are maps, else the last wins.
    #[test]
    fn same_name_blocks_of_a_facet_combine() {
        let combined = combine_facet_blocks(vec![
            block("a", 0, Strategy::Merge, json!({"x": {"p": 1}})),
            block("b", 0, Strategy::Merge, json!("scalar")),
            block("a", 0, Strategy::Merge, json!({"x": {"q": 2}})),
            block("b", 0, Strategy::Merge, json!(["list"])),
        ]);
        let names: Vec<_> = combined.iter().map(|b| (b.name.as_str(), b.value.clone())).collect();
        assert_eq!(names, vec![("a", json!({"x": {"p": 1, "q": 2}})), ("b", json!(["list"]))]);
    }

    #[test]
    fn a_guard_reads_its_own_keys_from_the_context() {
        let scope = json!({"network": {"cidr_block": "10.5.0.0/16", "region": "us"}});
        let context = json!({});
        let guard = blind_scope(&scope, &context, "network", &json!({"cidr_block": "x"}));
        assert_eq!(guard, Some(json!({"network": {"region": "us"}})));
        let guard = blind_scope(&scope, &json!({"network": "ctx"}), "network", &json!("scalar"));
        assert_eq!(guard, Some(json!({"network": "ctx"})));
    }
}
