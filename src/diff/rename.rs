//! Rename detection, as dyff does it (homeport/dyff `compare.documentNodes` with
//! gonvenience/idem's `DetectRenames`, after git's and JGit's similarity rename detector): a
//! resource only one side holds is paired with one of the other side when both are of the same
//! kind and their content is similar enough. The content is the resource written as YAML; its
//! lines are counted by their bytes, and the similarity is the bytes of lines both share over
//! the bytes of the larger one, in percent. The best-scoring pairs are taken first, each
//! resource in one pair at most. A configMapGenerator's hash suffix or an apiVersion bump then
//! shows as the few fields that changed, not as two whole documents.

use super::Id;
use crate::doc::{to_yaml, Value};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// The least similarity (percent) that pairs two resources: idem's default rename score.
pub const THRESHOLD: u32 = 60;

/// The most (removed × added) pairs of one kind compared: each comparison reads both resources'
/// lines, so a change that replaces thousands of resources of one kind would take long. A kind
/// with more is left unpaired and named in the report's notes. idem's own limit is 50 resources
/// a side; this is its largest similarity matrix.
pub const MAX_PAIRS: usize = 10_000;

/// What [`detect`] found: `(removed, added, similarity)` by index into its arguments, and the
/// kinds it did not look at (over [`MAX_PAIRS`]).
pub struct Renames {
    pub pairs: Vec<(usize, usize, u32)>,
    pub skipped_kinds: Vec<String>,
}

/// A resource's lines as counts of bytes per line hash, and their total.
struct Lines {
    counts: HashMap<u64, u64>,
    total: u64,
}

impl Lines {
    fn of(value: &Value) -> Lines {
        let text = to_yaml(value);
        let mut counts: HashMap<u64, u64> = HashMap::new();
        let mut total = 0u64;
        for line in text.split_inclusive('\n') {
            let mut hasher = DefaultHasher::new();
            line.hash(&mut hasher);
            let bytes = line.len() as u64;
            *counts.entry(hasher.finish()).or_default() += bytes;
            total += bytes;
        }
        Lines { counts, total }
    }

    /// The similarity of two resources in percent: 100 for two empty ones.
    fn score(&self, other: &Lines) -> u32 {
        let most = self.total.max(other.total);
        if most == 0 {
            return 100;
        }
        let (small, large) = if self.counts.len() <= other.counts.len() { (self, other) } else { (other, self) };
        let common: u64 =
            small.counts.iter().map(|(hash, n)| (*n).min(large.counts.get(hash).copied().unwrap_or(0))).sum();
        u32::try_from(common.saturating_mul(100) / most).unwrap_or(100)
    }
}

/// The length of the names' common start: among equally similar pairs, `settings-7f9c` goes with
/// `settings-b5kt` before `other-b5kt`.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Pairs `removed` with `added` resources: same kind, similarity at least [`THRESHOLD`], the
/// most similar pairs first (then the names with the longest common start, then by position).
pub fn detect(removed: &[(&Id, &Value)], added: &[(&Id, &Value)]) -> Renames {
    let mut kinds: Vec<&str> = Vec::new();
    let mut by_kind: HashMap<&str, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (i, (id, _)) in removed.iter().enumerate() {
        if !by_kind.contains_key(id.kind.as_str()) {
            kinds.push(&id.kind);
        }
        by_kind.entry(&id.kind).or_default().0.push(i);
    }
    for (i, (id, _)) in added.iter().enumerate() {
        if let Some(entry) = by_kind.get_mut(id.kind.as_str()) {
            entry.1.push(i);
        }
    }
    let mut renames = Renames { pairs: Vec::new(), skipped_kinds: Vec::new() };
    for kind in kinds {
        let Some((gone, new)) = by_kind.get(kind) else { continue };
        if gone.is_empty() || new.is_empty() {
            continue;
        }
        if gone.len().saturating_mul(new.len()) > MAX_PAIRS {
            renames.skipped_kinds.push(kind.to_string());
            continue;
        }
        let gone_lines: Vec<Lines> = gone.iter().map(|&r| Lines::of(removed[r].1)).collect();
        let new_lines: Vec<Lines> = new.iter().map(|&a| Lines::of(added[a].1)).collect();
        let mut candidates = Vec::new();
        for (gi, g) in gone_lines.iter().enumerate() {
            for (ni, n) in new_lines.iter().enumerate() {
                let (small, large) = (g.total.min(n.total), g.total.max(n.total).max(1));
                if small.saturating_mul(100) / large < u64::from(THRESHOLD) {
                    continue;
                }
                let score = g.score(n);
                if score >= THRESHOLD {
                    let prefix = common_prefix(&removed[gone[gi]].0.name, &added[new[ni]].0.name);
                    candidates.push((score, prefix, gone[gi], new[ni]));
                }
            }
        }
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.3.cmp(&b.3)).then(a.2.cmp(&b.2)));
        let (mut gone_taken, mut new_taken) = (Vec::new(), Vec::new());
        for (score, _, r, a) in candidates {
            if gone_taken.contains(&r) || new_taken.contains(&a) {
                continue;
            }
            gone_taken.push(r);
            new_taken.push(a);
            renames.pairs.push((r, a, score));
        }
    }
    renames
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(kind: &str, name: &str) -> Id {
        Id {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: String::new(),
            name: name.into(),
            file: String::new(),
        }
    }

    #[test]
    fn most_similar_of_the_same_kind_is_paired() {
        let data: serde_json::Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!(format!("v{i}")))).collect();
        let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings-7f9c"}, "data": data});
        let mut new = old.clone();
        new["metadata"]["name"] = json!("settings-b5kt");
        let mut secret = new.clone();
        secret["kind"] = json!("Secret");
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}});
        let (old_id, new_id, secret_id, other_id) = (
            id("ConfigMap", "settings-7f9c"),
            id("ConfigMap", "settings-b5kt"),
            id("Secret", "s"),
            id("ConfigMap", "x"),
        );
        let found = detect(&[(&old_id, &old)], &[(&secret_id, &secret), (&other_id, &other), (&new_id, &new)]);
        assert_eq!(found.pairs.len(), 1);
        let (r, a, score) = found.pairs[0];
        assert_eq!((r, a), (0, 2));
        assert!((90..100).contains(&score), "{score}");
    }

    #[test]
    fn too_many_pairs_of_a_kind_are_not_compared() {
        let ids: Vec<Id> = (0..101).map(|i| id("ConfigMap", &format!("c{i}"))).collect();
        let value = json!({"kind": "ConfigMap"});
        let side: Vec<(&Id, &Value)> = ids.iter().map(|id| (id, &value)).collect();
        let found = detect(&side, &side);
        assert!(found.pairs.is_empty());
        assert_eq!(found.skipped_kinds, ["ConfigMap"]);
    }
}
