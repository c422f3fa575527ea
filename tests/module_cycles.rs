//! The crate's top-level modules are drawn as if they were crates (see docs/development.md), so
//! their `crate::…` references must not form a cycle. This reads `src/` as text: every
//! `crate::name` (and each top-level name of a `crate::{…}` group) outside comments is an edge
//! from the module whose file it is in to the module `name`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// Edges known to close a cycle, left for a later change; each must still exist, so the list
/// only shrinks.
const KNOWN: &[(&str, &str)] = &[];

type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for (from, to) in KNOWN {
        assert!(
            graph.get(*from).is_some_and(|deps| deps.contains_key(*to)),
            "{from} no longer uses {to}: remove the pair from KNOWN"
        );
    }
    let mut graph = graph;
    for (from, to) in KNOWN {
        graph.get_mut(*from).map(|deps| deps.remove(*to));
    }
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "import cycles among the top-level modules of src/:\n{}", cycles.join("\n"));
}

/// The modules inside `src/krm/` are drawn as layers too (docs/development.md): the scalar
/// rules, the header, cutting and threads at the bottom, then the line reader, the event walk,
/// the splice, the item, and the list reader on top. Edges are `super::name` and
/// `crate::krm::name` references (to `mod` when `name` is not a module: something `mod.rs`
/// defines or re-exports) and, in `mod.rs`, `name::` of a child module. Test modules at a
/// file's end may reach anywhere and are not read.
#[test]
fn krm_modules_form_no_cycle() {
    let graph = krm_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/krm"));
    for module in ["rules", "head", "cut", "threads"] {
        assert!(
            graph.get(module).is_some_and(|deps| deps.is_empty()),
            "krm::{module} is a leaf, but uses {:?}",
            graph.get(module).map(|deps| deps.keys().collect::<Vec<_>>())
        );
    }
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "import cycles among the modules of src/krm/:\n{}", cycles.join("\n"));
}

fn krm_graph(dir: &Path) -> Graph {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src/krm/ is readable") {
        let path = entry.expect("src/krm/ is readable").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            files.push((name, path));
        }
    }
    let children: BTreeSet<String> = files.iter().map(|(name, _)| name.clone()).filter(|name| name != "mod").collect();
    let mut graph: Graph = files.iter().map(|(name, _)| (name.clone(), BTreeMap::new())).collect();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        let text = text.split("\n#[cfg(test)]\nmod tests").next().unwrap_or_default();
        let code: Vec<&str> = text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect();
        let code = code.join("\n");
        let place = |at: usize| {
            format!(
                "krm/{}:{}",
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
        for prefix in ["super::", "crate::krm::"] {
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

/// Module → module it uses → where (`file:line`). `lib.rs` and `main.rs` only declare modules.
fn module_graph(src: &Path) -> Graph {
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(src).expect("src/ is readable") {
        let path = entry.expect("src/ is readable").path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            let mut pending = vec![path];
            while let Some(dir) = pending.pop() {
                for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
                    let path = entry.expect("src/ is readable").path();
                    if path.is_dir() {
                        pending.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        files.push((name.clone(), path));
                    }
                }
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            files.push((name, path));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut graph: Graph = modules.iter().map(|m| (m.clone(), BTreeMap::new())).collect();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        let code: Vec<&str> = text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect();
        let code = code.join("\n");
        let place = |at: usize| {
            let line = code[..at].matches('\n').count() + 1;
            format!("{}:{line}", path.strip_prefix(src).unwrap_or(path).display())
        };
        for (at, _) in code.match_indices("crate::") {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            for name in referenced(&code[at + "crate::".len()..]) {
                if modules.contains(name) && name != module {
                    let deps = graph.get_mut(module).expect("every module has an entry");
                    deps.entry(name.to_string()).or_default().push(place(at));
                }
            }
        }
    }
    graph
}

/// The top-level names after `crate::`: one name, or each first name of a `{…}` group.
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

/// Folder → (from, to) edges known to close a cycle inside that folder, left for a later change;
/// each must still exist, so the list only shrinks.
const KNOWN_INSIDE: &[(&str, &str, &str)] = &[];

/// Folders drawn as strict layers, as `krm/`: no module uses what the folder's `mod.rs` defines
/// (nor another top named), and the leaves named use no sibling.
const LAYERED: &[(&str, &[&str], &[&str])] = &[
    ("features", &["model", "known"], &[]),
    // Only the top wires the builtins' table in: `mod.rs` for expressions, `interpolate` for
    // templates.
    ("expr", &["error", "arity", "ty", "host", "secret", "semantics"], &["interpolate"]),
    ("patch", &[], &[]),
    ("imports", &[], &[]),
    ("repeat", &[], &[]),
    ("subst", &[], &[]),
    // The Go template engine: Masterminds' version, Go's strconv and comments at the bottom.
    ("template/go", &["semver", "strconv", "comments"], &[]),
];

/// Every folder of `src/` is drawn as layers too: its modules (each file, and each sub-folder with
/// what it holds) must form no cycle among themselves.
/// Edges come from `super::…`, `self::…` and `crate::…` paths resolved from the file's own
/// module path, and in a module file from `child::…` paths; test modules (`tests.rs`, and a
/// `#[cfg(test)] mod tests` at a file's end) may reach anywhere and are not read.
#[test]
fn modules_inside_every_folder_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = module_files(&src);
    let mut folders: BTreeSet<Vec<String>> = BTreeSet::new();
    for (path, _) in &files {
        for depth in 1..path.len() {
            folders.insert(path[..depth].to_vec());
        }
    }
    let mut failures = Vec::new();
    for folder in &folders {
        let name = folder.join("/");
        let mut graph = folder_graph(folder, &files);
        for (known, from, to) in KNOWN_INSIDE.iter().filter(|(f, _, _)| *f == name) {
            assert!(
                graph.get(*from).is_some_and(|deps| deps.contains_key(*to)),
                "{known}: {from} no longer uses {to}: remove the triple from KNOWN_INSIDE"
            );
            graph.get_mut(*from).map(|deps| deps.remove(*to));
        }
        if let Some((_, leaves, tops)) = LAYERED.iter().find(|(f, _, _)| *f == name) {
            for (module, deps) in &graph {
                for top in ["mod"].iter().chain(tops.iter()).filter(|top| **top != module && deps.contains_key(**top)) {
                    failures.push(format!(
                        "src/{name}/{module} uses the top module {top} ({:?}): give what it uses a module of its own",
                        deps[*top]
                    ));
                }
            }
            for leaf in *leaves {
                if let Some(deps) = graph.get(*leaf).filter(|deps| !deps.is_empty()) {
                    failures
                        .push(format!("src/{name}/{leaf} is a leaf, but uses {:?}", deps.keys().collect::<Vec<_>>()));
                }
            }
        }
        // The folder's own module file declares its children and re-exports them: it is the
        // folder's face, not a layer (krm's test above, and LAYERED, hold folders to the
        // stricter rule).
        graph.remove("mod");
        for deps in graph.values_mut() {
            deps.remove("mod");
        }
        let cycles = cycles(&graph);
        if !cycles.is_empty() {
            failures.push(format!("src/{name}/:\n{}", cycles.join("\n")));
        }
    }
    assert!(failures.is_empty(), "import cycles inside folders of src/:\n{}", failures.join("\n"));
}

/// Each source file's module path below the crate (`template/go/value.rs` is
/// `["template", "go", "value"]`, `expr/mod.rs` is `["expr"]`) and its code: comments cut, a
/// trailing test module cut, test-only files (`tests.rs`) left out.
fn module_files(src: &Path) -> Vec<(Vec<String>, String)> {
    let mut files = Vec::new();
    let mut pending = vec![(src.to_path_buf(), Vec::<String>::new())];
    while let Some((dir, prefix)) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("src/ is readable").path();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            if path.is_dir() {
                let mut inner = prefix.clone();
                inner.push(stem);
                pending.push((path, inner));
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || stem == "tests" {
                continue;
            }
            if prefix.is_empty() && (stem == "lib" || stem == "main") {
                continue;
            }
            let mut module = prefix.clone();
            if stem != "mod" {
                module.push(stem);
            }
            let text = std::fs::read_to_string(&path).expect("a source file is readable");
            let text = text.split("\n#[cfg(test)]\nmod tests").next().unwrap_or_default();
            let code: Vec<&str> = text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect();
            files.push((module, code.join("\n")));
        }
    }
    files
}

/// The graph of `folder`'s child modules: an edge from the child holding a file to the child a
/// path in it names (`mod` for an item of the folder's own module file).
fn folder_graph(folder: &[String], files: &[(Vec<String>, String)]) -> Graph {
    let node = |module: &[String]| -> Option<String> {
        match module.strip_prefix(folder) {
            Some([]) => Some("mod".to_string()),
            Some([child, ..]) => Some(child.clone()),
            None => None,
        }
    };
    let mut graph: Graph = BTreeMap::new();
    let children: BTreeSet<String> =
        files.iter().filter_map(|(module, _)| node(module)).filter(|n| n != "mod").collect();
    for (module, code) in files {
        let Some(from) = node(module) else { continue };
        graph.entry(from.clone()).or_default();
        let is_module_file =
            |m: &[String]| files.iter().any(|(other, _)| other.len() > m.len() && other.starts_with(m));
        let mut targets: Vec<(Vec<String>, usize)> = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let rest = &code[at + "crate::".len()..];
            for (head, tail) in paths(rest) {
                let mut path = vec![head.to_string()];
                path.extend(tail);
                targets.push((path, at));
            }
        }
        for (at, _) in code.match_indices("super::") {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &code[at..];
            // A module's own file (`mod.rs`, `go.rs` beside `go/`) is the module: `super` is its parent.
            let mut base: Vec<String> = module.clone();
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
            for (head, tail) in paths(rest) {
                let mut path = base.clone();
                path.push(head.to_string());
                path.extend(tail);
                targets.push((path, at));
            }
        }
        if is_module_file(module) {
            for prefix in ["self::", ""] {
                for child in files.iter().filter_map(|(m, _)| m.strip_prefix(module.as_slice()).and_then(|r| r.first()))
                {
                    let pattern = format!("{prefix}{child}::");
                    for (at, _) in code.match_indices(&pattern) {
                        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                            continue;
                        }
                        let mut path = module.clone();
                        path.push(child.clone());
                        targets.push((path, at));
                    }
                }
            }
        }
        for (path, at) in targets {
            let Some(to) = node(&path).map(|n| if children.contains(&n) { n } else { "mod".to_string() }) else {
                continue;
            };
            if to != from {
                let line = code[..at].matches('\n').count() + 1;
                let place = format!("{}:{line}", module.join("/"));
                graph.entry(from.clone()).or_default().entry(to.clone()).or_default().push(place);
                graph.entry(to).or_default();
            }
        }
    }
    graph
}

/// The paths a `use`-like text starts with: `a::b::c` gives `(a, [b])` (the last segment may be
/// an item), a group `{a::x, b}` each of its members' first two segments.
fn paths(rest: &str) -> Vec<(&str, Vec<String>)> {
    let segments = |s: &str| -> Vec<String> {
        s.trim_start()
            .split("::")
            .map(|seg| {
                let end = seg.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(seg.len());
                seg[..end].to_string()
            })
            .take_while(|seg| !seg.is_empty())
            .collect()
    };
    referenced(rest)
        .into_iter()
        .map(|head| {
            let at = rest.find(head).unwrap_or(0);
            let tail: Vec<String> = segments(&rest[at..]).into_iter().skip(1).take(1).collect();
            (head, tail)
        })
        .collect()
}

/// Expressions and templates pass their scope through evaluation: no `thread_local!` holds it
/// (a value set by one evaluation must not leak into another on the same thread).
#[test]
fn expressions_and_templates_keep_no_thread_local_state() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeSet::new();
    for folder in ["expr", "template"] {
        let mut pending = vec![src.join(folder)];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
                let path = entry.expect("src/ is readable").path();
                if path.is_dir() {
                    pending.push(path);
                } else if std::fs::read_to_string(&path).is_ok_and(|text| text.contains("thread_local!")) {
                    let relative = path.strip_prefix(&src).unwrap_or(&path).display().to_string();
                    found.insert(relative);
                }
            }
        }
    }
    assert!(found.is_empty(), "thread_local! in {found:?}: pass the state through evaluation instead");
}
