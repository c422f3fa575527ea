//! The modules inside `src/expr/` are drawn as layers (docs/development.md), checked as
//! `tests/module_cycles.rs` checks `src/krm/`: edges are `super::name` and `crate::expr::name`
//! references (to `mod` when `name` is not a module: something `mod.rs` defines or re-exports)
//! and, in `mod.rs`, `name::` of a child module. Test modules (at a file's end, or `tests.rs`)
//! may reach anywhere and are not read.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

#[test]
fn expr_modules_form_no_cycle() {
    let graph = folder_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/expr"), "expr");
    for module in ["error", "arity", "ty", "host", "secret"] {
        assert!(
            graph.get(module).is_some_and(|deps| deps.is_empty()),
            "expr::{module} is a leaf, but uses {:?}",
            graph.get(module).map(|deps| deps.keys().collect::<Vec<_>>())
        );
    }
    // Only the top wires the builtins' table in: `mod.rs` for expressions, `interpolate` for
    // templates; nothing below names either.
    for (module, deps) in &graph {
        for top in ["mod", "interpolate"] {
            assert!(!deps.contains_key(top), "expr::{module} uses the top module {top} at {:?}", deps.get(top));
        }
    }
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "import cycles among the modules of src/expr/:\n{}", cycles.join("\n"));
}

fn folder_graph(dir: &Path, folder: &str) -> Graph {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the folder is readable") {
        let path = entry.expect("the folder is readable").path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "tests" {
            files.push((name, path));
        }
    }
    let children: BTreeSet<String> = files.iter().map(|(name, _)| name.clone()).filter(|name| name != "mod").collect();
    let mut graph: Graph = files.iter().map(|(name, _)| (name.clone(), BTreeMap::new())).collect();
    let absolute = format!("crate::{folder}::");
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        let text = text.split("\n#[cfg(test)]\nmod tests").next().unwrap_or_default();
        let code: Vec<&str> = text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect();
        let code = code.join("\n");
        let place = |at: usize| {
            format!(
                "{folder}/{}:{}",
                path.file_name().and_then(|n| n.to_str()).unwrap_or_default(),
                code[..at].matches('\n').count() + 1
            )
        };
        let add = |graph: &mut Graph, name: &str, at: usize| {
            let to = if children.contains(name) { name.to_string() } else { "mod".to_string() };
            if to != *module {
                graph.get_mut(module).expect("every module has an entry").entry(to).or_default().push(place(at));
            }
        };
        for prefix in ["super::", absolute.as_str()] {
            for (at, _) in code.match_indices(prefix) {
                let rest = &code[at + prefix.len()..];
                if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                    || rest.starts_with("super::")
                {
                    continue;
                }
                if *module == "mod" && prefix == "super::" {
                    continue;
                }
                for name in referenced(rest) {
                    add(&mut graph, name, at);
                }
            }
        }
        if *module == "mod" {
            for child in &children {
                let pattern = format!("{child}::");
                for (at, _) in code.match_indices(&pattern) {
                    if !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                        add(&mut graph, child, at);
                    }
                }
            }
        }
    }
    graph
}

/// The top-level names after a path prefix: one name, or each first name of a `{…}` group.
fn referenced(rest: &str) -> Vec<&str> {
    fn ident(s: &str) -> &str {
        let s = s.trim_start();
        let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
        &s[..end]
    }
    if !rest.starts_with('{') {
        return vec![ident(rest)];
    }
    let mut names = vec![ident(&rest[1..])];
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => break,
            '}' => depth -= 1,
            ',' if depth == 1 => names.push(ident(&rest[i + 1..])),
            _ => {}
        }
    }
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// One cycle per group of modules that reach each other, as `a -> b (file:line) -> … -> a`.
fn cycles(graph: &Graph) -> Vec<String> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut pending = vec![from.to_string()];
        while let Some(module) = pending.pop() {
            for next in graph[&module].keys() {
                if seen.insert(next.clone()) {
                    pending.push(next.clone());
                }
            }
        }
        seen
    };
    let mut reported: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for module in graph.keys() {
        if reported.contains(module) || !reach(module).contains(module) {
            continue;
        }
        let group: BTreeSet<String> = reach(module).into_iter().filter(|m| reach(m).contains(module)).collect();
        reported.extend(group.iter().cloned());
        // The shortest way back to `module`, found breadth first.
        let mut back: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = VecDeque::from([module.clone()]);
        'search: while let Some(at) = queue.pop_front() {
            for next in graph[&at].keys() {
                if next == module {
                    back.insert(module.clone(), at);
                    break 'search;
                }
                if !back.contains_key(next) {
                    back.insert(next.clone(), at.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        let mut path = vec![module.clone()];
        let mut at = back[module].clone();
        while &at != module {
            path.push(at.clone());
            at = back[&at].clone();
        }
        path.push(module.clone());
        path.reverse();
        let steps: Vec<String> = path
            .windows(2)
            .map(|pair| format!("{} -> {} ({})", pair[0], pair[1], graph[&pair[0]][&pair[1]][0]))
            .collect();
        let members: Vec<&str> = group.iter().map(String::as_str).collect();
        found.push(format!("  {{{}}}: {}", members.join(", "), steps.join(", ")));
    }
    found
}
