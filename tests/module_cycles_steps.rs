//! The modules inside the step folders `src/patch/`, `src/imports/`, `src/repeat/` and
//! `src/subst/` are layers too (docs/development.md), checked as `krm_modules_form_no_cycle` in
//! `tests/module_cycles.rs` checks `src/krm/`: edges are `super::name` and `crate::<folder>::name`
//! references (to `mod` when `name` is not a module: something `mod.rs` defines or re-exports)
//! and, in `mod.rs`, `name::` of a child module. A child folder (`repeat/kots/`) is one module.
//! Test modules at a file's end may reach anywhere and are not read.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

#[test]
fn step_modules_form_no_cycle() {
    let mut found = Vec::new();
    for folder in ["patch", "imports", "repeat", "subst"] {
        let graph = folder_graph(folder);
        let cycles = cycles(&graph);
        if !cycles.is_empty() {
            found.push(format!("import cycles among the modules of src/{folder}/:\n{}", cycles.join("\n")));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The files of `src/<folder>/`, each with the module it belongs to: a file directly inside is
/// the module its stem names, every file of a child folder belongs to that folder's module.
fn files(dir: &Path) -> Vec<(String, PathBuf, bool)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a source folder is readable") {
        let path = entry.expect("a source folder is readable").path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            let mut pending = vec![path];
            while let Some(sub) = pending.pop() {
                for entry in std::fs::read_dir(&sub).expect("a source folder is readable") {
                    let path = entry.expect("a source folder is readable").path();
                    if path.is_dir() {
                        pending.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        files.push((name.clone(), path, true));
                    }
                }
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push((name, path, false));
        }
    }
    files
}

fn folder_graph(folder: &str) -> Graph {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(folder);
    let files = files(&dir);
    let children: BTreeSet<String> = files.iter().map(|(name, ..)| name.clone()).filter(|name| name != "mod").collect();
    let mut graph: Graph = files.iter().map(|(name, ..)| (name.clone(), BTreeMap::new())).collect();
    let own = format!("crate::{folder}::");
    for (module, path, nested) in &files {
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        let text = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or_default();
        let code: Vec<&str> = text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect();
        let code = code.join("\n");
        let place = |at: usize| {
            format!(
                "{folder}/{}:{}",
                path.strip_prefix(&dir).unwrap_or(path).display(),
                code[..at].matches('\n').count() + 1
            )
        };
        let add = |graph: &mut Graph, name: &str, at: usize| {
            let to = if children.contains(name) { name.to_string() } else { "mod".to_string() };
            if to != *module {
                graph.get_mut(module).expect("every module has an entry").entry(to).or_default().push(place(at));
            }
        };
        // In a child folder `super::` names the child's own modules, but in its `mod.rs`, which
        // names the folder's.
        let is_child_root =
            *nested && path.file_stem().is_some_and(|s| s == "mod") && path.parent() == Some(&dir.join(module));
        let super_is_folder = (!*nested && *module != "mod") || is_child_root;
        for prefix in ["super::", own.as_str()] {
            for (at, _) in code.match_indices(prefix) {
                let rest = &code[at + prefix.len()..];
                if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                    || rest.starts_with("super::")
                {
                    continue;
                }
                if prefix == "super::" && !super_is_folder {
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
