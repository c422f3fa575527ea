//! Windsor's list order (api/v1alpha1/blueprint_types.go `sortKustomize`, `sortTerraform`).
//! Windsor re-sorts after every merge, replace or append, so callers do the same: the order
//! Windsor writes depends on insertion history, not only on the final graph.
//!
//! The walk is iterative, so a long `dependsOn` chain in the input cannot exhaust the stack.

use super::model::{Kustomization, TerraformComponent};
use std::collections::HashMap;

/// An entry of a dependency graph: its key (kustomization name, terraform id) and dependencies.
pub trait Node {
    fn key(&self) -> &str;
    fn depends_on(&self) -> &[String];
}

impl Node for Kustomization {
    fn key(&self) -> &str {
        &self.name
    }
    fn depends_on(&self) -> &[String] {
        &self.depends_on
    }
}

impl Node for TerraformComponent {
    /// The path, or the name when one is set (v0.9's component identity).
    fn key(&self) -> &str {
        self.id()
    }
    fn depends_on(&self) -> &[String] {
        &self.depends_on
    }
}

/// Key to index; a repeated key maps to its last entry, as Windsor's map does.
fn index_of<T: Node>(list: &[T]) -> HashMap<&str, usize> {
    list.iter().enumerate().map(|(i, n)| (n.key(), i)).collect()
}

/// Depth-first, in list order and each entry's `dependsOn` order, dependencies first: entries
/// without dependencies keep their relative order. Unknown dependencies are skipped. `Err` is
/// the first cycle met, as keys ending where they started.
fn topological<T: Node>(list: &[T], index: &HashMap<&str, usize>) -> Result<Vec<usize>, Vec<String>> {
    const NEW: u8 = 0;
    const VISITING: u8 = 1;
    let mut state = vec![NEW; list.len()];
    let mut order = Vec::with_capacity(list.len());
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for start in 0..list.len() {
        if state[start] != NEW {
            continue;
        }
        state[start] = VISITING;
        stack.push((start, 0));
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            let Some(dependency) = list[node].depends_on().get(*next) else {
                state[node] = 2;
                order.push(node);
                stack.pop();
                continue;
            };
            *next += 1;
            let Some(&d) = index.get(dependency.as_str()) else { continue };
            match state[d] {
                NEW => {
                    state[d] = VISITING;
                    stack.push((d, 0));
                }
                VISITING => {
                    let at = stack.iter().position(|&(n, _)| n == d).unwrap_or(0);
                    let mut cycle: Vec<String> = stack[at..].iter().map(|&(n, _)| list[n].key().to_string()).collect();
                    cycle.push(list[d].key().to_string());
                    return Err(cycle);
                }
                _ => {}
            }
        }
    }
    Ok(order)
}

/// Windsor's `groupSimilarPrefixes`: names sharing the part before the first `-` are pulled
/// together where the first of them stands, shallowest dependency depth first, then by name.
/// Like Windsor, this can lift an entry above a dependency that has another prefix; Flux
/// orders by `dependsOn`, not by list position, so only the listing is affected.
fn group_prefixes(list: &[Kustomization], sorted: &[usize], index: &HashMap<&str, usize>) -> Vec<usize> {
    let prefix = |i: usize| list[i].name.split('-').next().unwrap_or_default();
    // `sorted` lists dependencies first, so each depth is known before its dependents need it.
    let mut depth = vec![0usize; list.len()];
    for &i in sorted {
        depth[i] =
            list[i].depends_on.iter().filter_map(|d| index.get(d.as_str())).map(|&d| depth[d] + 1).max().unwrap_or(0);
    }
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for &i in sorted {
        groups.entry(prefix(i)).or_default().push(i);
    }
    let mut done = vec![false; list.len()];
    let mut grouped = Vec::with_capacity(sorted.len());
    for &i in sorted {
        if done[i] {
            continue;
        }
        let mut group = groups.get(prefix(i)).cloned().unwrap_or_default();
        group.sort_by(|&a, &b| depth[a].cmp(&depth[b]).then_with(|| list[a].name.cmp(&list[b].name)));
        for member in group {
            if !done[member] {
                done[member] = true;
                grouped.push(member);
            }
        }
    }
    grouped
}

fn reorder<T>(list: &mut Vec<T>, order: &[usize]) {
    let mut slots: Vec<Option<T>> = std::mem::take(list).into_iter().map(Some).collect();
    list.extend(order.iter().filter_map(|&i| slots.get_mut(i).and_then(Option::take)));
}

/// Windsor's `sortKustomize`; on a cycle the list is left as it was.
pub fn sort_kustomizations(list: &mut Vec<Kustomization>) -> Result<(), Vec<String>> {
    if list.len() <= 1 {
        return Ok(());
    }
    let index = index_of(list);
    let sorted = topological(list, &index)?;
    let grouped = group_prefixes(list, &sorted, &index);
    reorder(list, &grouped);
    Ok(())
}

/// Windsor's `sortTerraform` (keyed by path, no prefix grouping); on a cycle the list is left
/// as it was.
pub fn sort_terraform(list: &mut Vec<TerraformComponent>) -> Result<(), Vec<String>> {
    if list.len() <= 1 {
        return Ok(());
    }
    let sorted = topological(list, &index_of(list))?;
    reorder(list, &sorted);
    Ok(())
}

/// What the merged graph still gets wrong: the first cycle (`Err`), or the `(entry, unknown
/// dependency)` pairs that name nothing in the list.
pub fn check<T: Node>(list: &[T]) -> Result<Vec<(String, String)>, Vec<String>> {
    let index = index_of(list);
    topological(list, &index)?;
    let mut unknown = Vec::new();
    for node in list {
        for dependency in node.depends_on() {
            if !index.contains_key(dependency.as_str()) {
                unknown.push((node.key().to_string(), dependency.clone()));
            }
        }
    }
    Ok(unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kustomization(name: &str, depends_on: &[&str]) -> Kustomization {
        Kustomization {
            name: name.into(),
            depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
            ..Default::default()
        }
    }

    fn names(list: &[Kustomization]) -> Vec<&str> {
        list.iter().map(|k| k.name.as_str()).collect()
    }

    #[test]
    fn independent_entries_keep_input_order() {
        let mut list = vec![kustomization("z", &[]), kustomization("b", &["c"]), kustomization("c", &[])];
        assert_eq!(sort_kustomizations(&mut list), Ok(()));
        assert_eq!(names(&list), vec!["z", "c", "b"]);
    }

    #[test]
    fn prefixes_group_by_depth_then_name() {
        let mut list = vec![kustomization("x-b", &[]), kustomization("y", &[]), kustomization("x-a", &[])];
        assert_eq!(sort_kustomizations(&mut list), Ok(()));
        assert_eq!(names(&list), vec!["x-a", "x-b", "y"]);
    }

    #[test]
    fn cycles_are_named_and_leave_the_order() {
        let mut list = vec![kustomization("x", &[]), kustomization("a", &["b"]), kustomization("b", &["a"])];
        let cycle = sort_kustomizations(&mut list).err();
        assert_eq!(cycle, Some(vec!["a".to_string(), "b".to_string(), "a".to_string()]));
        assert_eq!(names(&list), vec!["x", "a", "b"]);
        let mut own = vec![kustomization("s", &["s"])];
        assert_eq!(check(&own).err(), Some(vec!["s".to_string(), "s".to_string()]));
        assert_eq!(sort_kustomizations(&mut own), Ok(()));
    }

    #[test]
    fn long_chains_do_not_recurse() {
        let names: Vec<String> = (0..50_000).map(|i| format!("k{i}")).collect();
        let list: Vec<Kustomization> = names
            .iter()
            .enumerate()
            .map(|(i, n)| kustomization(n, &[names.get(i + 1).map(String::as_str).unwrap_or("end")]))
            .collect();
        let index = index_of(&list);
        assert_eq!(topological(&list, &index).map(|o| o.first().copied()), Ok(Some(49_999)));
    }
}
