//! Human-readable reports of a render: `explain` (every decision, the values behind it and where
//! they came from) and `graph` (the kustomization dependency graph as Mermaid or DOT). Pure
//! functions from a [`pipeline::Output`] to text; the CLI prints them.
//!
//! Secret values (an import whose schema says `format: password` or `writeOnly: true`, a KOTS
//! `type: password` item, anything read from a Secret) print as `<redacted>` unless asked for:
//! explain output gets pasted into tickets and chats.

use crate::diag::Severity;
use crate::doc::Value;
use crate::features::{ComponentDecision, FeatureDecision};
use crate::krm::REDACTED;
use crate::pipeline::{Output, Report};
use std::fmt::Write;

/// Secret strings shorter than this are not searched for in messages: they would match words.
const MIN_SCRUBBED: usize = 4;

fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "nil".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// What to hide, and the secret strings to hide in messages that quote values (a schema failure
/// names the value it rejected).
struct Redact {
    show: bool,
    /// Secret places in the values tree.
    values: Vec<Vec<String>>,
    scrub: Vec<String>,
}

impl Redact {
    fn new(report: &Report, show: bool) -> Self {
        let sources = &report.value_sources;
        let mut values: Vec<Vec<String>> = sources
            .paths
            .iter()
            .filter(|(_, layer)| sources.layers.get(**layer).is_some_and(|l| l.secret))
            .map(|(path, _)| path.clone())
            .collect();
        values.extend(report.imports.secret_values.iter().cloned());
        let mut redact = Redact { show, values, scrub: Vec::new() };
        if show {
            return redact;
        }
        let mut scrub = Vec::new();
        if let Value::Object(map) = &report.values {
            for (key, value) in map {
                collect_secrets(value, &redact.inside(std::slice::from_ref(key)), &mut scrub);
            }
        }
        for (name, value) in &report.config {
            if report.config_sources.get(name).is_some_and(|s| s.secret) {
                collect_secrets(value, &[Vec::new()], &mut scrub);
            }
        }
        for import in report.imports.scopes.iter().flat_map(|s| &s.imports) {
            if let Some(value) = &import.value {
                collect_secrets(value, &import.secret, &mut scrub);
            }
        }
        for (_, value, source, _) in report.substitution.iter().flat_map(|s| &s.variables) {
            if source.secret {
                scrub.push(value.clone());
            }
        }
        scrub.retain(|s| s.chars().count() >= MIN_SCRUBBED);
        // Longest first, so a secret that holds another is replaced whole.
        scrub.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        scrub.dedup();
        redact.scrub = scrub;
        redact
    }

    /// The secret places inside the value at `path` of the values tree, relative to it.
    fn inside(&self, path: &[String]) -> Vec<Vec<String>> {
        let mut inside = Vec::new();
        for secret in &self.values {
            if secret.starts_with(path) {
                inside.push(secret[path.len()..].to_vec());
            } else if path.starts_with(secret) {
                inside.push(Vec::new());
            }
        }
        inside
    }

    /// The value as explain prints it, its secret places (relative paths) redacted.
    fn text(&self, value: &Value, secret: &[Vec<String>]) -> String {
        if self.show || secret.is_empty() {
            return value_text(value);
        }
        match redacted(value, secret) {
            Some(value) => value_text(&value),
            None => REDACTED.into(),
        }
    }

    /// A value that is secret as a whole or not at all (a KOTS item, a post-build variable).
    fn whole(&self, value: &Value, secret: bool) -> String {
        let all = [Vec::new()];
        self.text(value, if secret { &all } else { &[] })
    }

    /// A message with every secret string in it replaced.
    fn message(&self, text: &str) -> String {
        let mut text = text.to_string();
        for secret in &self.scrub {
            if text.contains(secret.as_str()) {
                // Quoted first, as schema messages quote it, so no quotes are left around.
                let quoted = serde_json::to_string(secret).unwrap_or_default();
                text = text.replace(&quoted, REDACTED).replace(secret.as_str(), REDACTED);
            }
        }
        text
    }
}

/// `value` with the places at `paths` replaced by `<redacted>`; `None` when that is all of it.
fn redacted(value: &Value, paths: &[Vec<String>]) -> Option<Value> {
    let mut out = value.clone();
    for path in paths {
        let Some((_, depth)) = walk(value, path) else { continue };
        if depth == 0 {
            return None;
        }
        let pointer: String =
            path[..depth].iter().map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1"))).collect();
        if let Some(at) = out.pointer_mut(&pointer) {
            *at = Value::String(REDACTED.into());
        }
    }
    Some(out)
}

/// The value at the secret place `path` of `value`, and how many of its keys lead there: all of
/// them, or fewer where the way leads through something other than a mapping (its secret part
/// cannot be told apart, so all of it is secret); `None` when the place does not exist.
fn walk<'v>(value: &'v Value, path: &[String]) -> Option<(&'v Value, usize)> {
    let mut at = value;
    for (depth, key) in path.iter().enumerate() {
        match at {
            Value::Object(map) => at = map.get(key.as_str())?,
            _ => return Some((at, depth)),
        }
    }
    Some((at, path.len()))
}

/// The strings (and numbers) at the secret places of `value`, to find in messages.
fn collect_secrets(value: &Value, secret: &[Vec<String>], out: &mut Vec<String>) {
    for path in secret {
        let Some((at, _)) = walk(value, path) else { continue };
        let mut pending = vec![at];
        while let Some(value) = pending.pop() {
            match value {
                Value::String(s) => out.push(s.clone()),
                Value::Number(n) => out.push(n.to_string()),
                Value::Array(list) => pending.extend(list),
                Value::Object(map) => pending.extend(map.values()),
                _ => {}
            }
        }
    }
}

/// Where the value at top-level `key` came from: `spec.values`; `spec.values; db.port from
/// --set` when a later layer merged deeper; just the later layers when they replaced every part
/// the first one set.
fn values_label(report: &Report, key: &str) -> String {
    let mut own = None;
    let mut deeper: Vec<(&[String], &str)> = Vec::new();
    for (path, source) in report.value_sources.under(key) {
        match path {
            [_] => own = Some(source.label.as_str()),
            [_, inside @ ..] => deeper.push((inside, source.label.as_str())),
            [] => {}
        }
    }
    let value = report.values.get(key).unwrap_or(&Value::Null);
    let own = own.filter(|_| deeper.is_empty() || uncovered(value, &deeper));
    // Deeper paths grouped by the layer that set them, in order of first appearance.
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (inside, label) in &deeper {
        let path = format!("{key}.{}", inside.join("."));
        match groups.iter_mut().find(|(l, _)| l == label) {
            Some((_, paths)) => paths.push(path),
            None => groups.push((label, vec![path])),
        }
    }
    match (own, groups.as_slice()) {
        (None, [(label, _)]) => label.to_string(),
        _ => {
            let groups = groups.iter().map(|(label, paths)| format!("{} from {label}", paths.join(", ")));
            own.map(str::to_string).into_iter().chain(groups).collect::<Vec<_>>().join("; ")
        }
    }
}

/// Whether some part of `value` lies under none of the `covered` paths (relative to it): then
/// the layer that set `value` whole still gave some of it.
fn uncovered(value: &Value, covered: &[(&[String], &str)]) -> bool {
    let mut pending: Vec<(Vec<&str>, &Value)> = vec![(Vec::new(), value)];
    while let Some((path, value)) = pending.pop() {
        if covered.iter().any(|(c, _)| c.iter().map(String::as_str).eq(path.iter().copied())) {
            continue;
        }
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (key, inner) in map {
                    let mut deeper = path.clone();
                    deeper.push(key.as_str());
                    pending.push((deeper, inner));
                }
            }
            _ => return true,
        }
    }
    false
}

fn with_source(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" ({label})")
    }
}

fn on_off(enabled: bool) -> &'static str {
    if enabled {
        "on"
    } else {
        "off"
    }
}

fn write_reads(out: &mut String, indent: &str, when: &str, reads: &[(String, Value)], redact: &Redact) {
    if when.trim().is_empty() {
        let _ = writeln!(out, "{indent}when: (empty: always on)");
        return;
    }
    let _ = writeln!(out, "{indent}when: {when}");
    for (path, value) in reads {
        let segments: Vec<String> = path.split('.').map(str::to_string).collect();
        let _ = writeln!(out, "{indent}  {path} = {}", redact.text(value, &redact.inside(&segments)));
    }
}

fn write_feature(out: &mut String, feature: &FeatureDecision, redact: &Redact) {
    let _ = writeln!(out, "  {} [{}] from {}", feature.name, on_off(feature.enabled), feature.origin);
    write_reads(out, "    ", &feature.when, &feature.reads, redact);
    for component in &feature.components {
        write_component(out, component, redact);
    }
}

fn write_component(out: &mut String, component: &ComponentDecision, redact: &Redact) {
    let _ = writeln!(
        out,
        "    {} {} [{}]: {}",
        component.kind,
        component.name,
        on_off(component.enabled),
        component.action
    );
    if !component.when.trim().is_empty() {
        write_reads(out, "      ", &component.when, &component.reads, redact);
    }
}

/// The `explain` report; secret values print as `<redacted>` unless `show_secrets`.
pub fn explain(output: &Output, show_secrets: bool) -> String {
    let mut out = String::new();
    let report = &output.report;
    let redact = Redact::new(report, show_secrets);
    let _ = writeln!(out, "values:");
    match &report.values {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                let text = redact.text(value, &redact.inside(std::slice::from_ref(key)));
                let _ = writeln!(out, "  {key} = {text}{}", with_source(&values_label(report, key)));
            }
        }
        _ => {
            let _ = writeln!(out, "  (none)");
        }
    }
    if !report.config.is_empty() {
        let _ = writeln!(out, "config (KOTS):");
        for (key, value) in &report.config {
            let source = report.config_sources.get(key).cloned().unwrap_or_default();
            let _ = writeln!(out, "  {key} = {}{}", redact.whole(value, source.secret), with_source(&source.label));
        }
    }
    if !report.repeat.clones.is_empty() {
        let _ = writeln!(out, "clones:");
        for clone in &report.repeat.clones {
            let _ = writeln!(
                out,
                "  {} from {} ({} = {}, from {})",
                clone.clone, clone.source, clone.from, clone.value, clone.origin
            );
        }
    }
    if !report.policy.decisions.is_empty() {
        let _ = writeln!(out, "policy:");
        for decision in &report.policy.decisions {
            let _ = writeln!(out, "  interface {} ({})", decision.interface, decision.path);
            if !decision.rule.is_empty() {
                let _ = writeln!(out, "    rule: {}", decision.rule);
                for merged in &decision.merged {
                    let _ = writeln!(out, "    merged with: {merged}");
                }
                let _ = writeln!(out, "    rule interface: {}", decision.rule_match);
            }
            for (candidate, verdict) in &decision.candidates {
                let _ = writeln!(out, "    {candidate}: {verdict}");
            }
            let _ = writeln!(out, "    chosen: {}", decision.chosen.as_deref().unwrap_or("none"));
            if !decision.constraints_match.is_empty() {
                let _ = writeln!(out, "    matched: {}", decision.constraints_match);
            }
            for injected in &decision.injected {
                let _ = writeln!(out, "    injected {injected}");
            }
        }
    }
    for scope in &report.imports.scopes {
        let _ = writeln!(out, "imports of {}:", scope.name);
        if scope.imports.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        for import in &scope.imports {
            let verdict = redact.message(&import.verdict);
            let Some(value) = &import.value else {
                let _ = writeln!(out, "  {} ({}): {verdict}", import.name, import.source);
                continue;
            };
            let label = match import.source {
                "value" if import.wired.is_empty() => values_label(report, &import.name),
                "value" => import.wired.clone(),
                "binding" => "import execution binding".into(),
                "default" => "import default".into(),
                other => other.to_string(),
            };
            let text = redact.text(value, &import.secret);
            let _ = writeln!(out, "  {} = {text}{}: {verdict}", import.name, with_source(&label));
        }
        for (name, after) in &scope.subinstallations {
            let after = if after.is_empty() { String::new() } else { format!(" (after {})", after.join(", ")) };
            let _ = writeln!(out, "  subinstallation {name}{after}");
        }
        if !scope.exports.is_empty() {
            let _ = writeln!(out, "  exports: {}", scope.exports.join(", "));
        }
    }
    let features = &report.features;
    if !features.features.is_empty() {
        let order = if features.version == Some(crate::config::WindsorVersion::V09) {
            "facets (Windsor v0.9: in order of ordinal, then name)"
        } else {
            "features (applied in order of name)"
        };
        let _ = writeln!(out, "{order}:");
        for feature in &features.features {
            write_feature(&mut out, feature, &redact);
        }
    }
    if let Some(blueprint) = &features.blueprint {
        let _ = writeln!(out, "blueprint {}:", blueprint.metadata.name);
        for component in &blueprint.terraform {
            let source = component.source.as_deref().map(|s| format!(" (source {s})")).unwrap_or_default();
            let _ = writeln!(out, "  terraform {}{source}", component.path);
        }
        for kustomization in features.crd_layers.iter().chain(&blueprint.kustomize).chain(&features.flux_tiers) {
            let depends = if kustomization.depends_on.is_empty() {
                String::new()
            } else {
                format!(" (after {})", kustomization.depends_on.join(", "))
            };
            let _ = writeln!(out, "  kustomization {} -> {}{depends}", kustomization.name, kustomization.path);
        }
    }
    if !report.patches.is_empty() {
        let _ = writeln!(out, "patches:");
        for patch in &report.patches {
            let _ = writeln!(out, "  {} ({}) {}", patch.field, patch.text, patch.target);
            if patch.matched.is_empty() {
                let _ = writeln!(out, "    matched nothing");
            }
            for resource in &patch.matched {
                let _ = writeln!(out, "    matched {resource}");
            }
        }
    }
    if let Some(substitution) = &report.substitution {
        let mode = if substitution.strict { "strict" } else { "not strict" };
        let _ = writeln!(out, "substitution ({mode}):");
        for (name, value, source, referenced) in &substitution.variables {
            let text = redact.whole(&Value::String(value.clone()), source.secret);
            let unused = if *referenced { "" } else { "; not referenced" };
            let _ = writeln!(out, "  {name} = {text} ({}{unused})", source.label);
        }
        if !substitution.unset.is_empty() {
            let _ = writeln!(
                out,
                "  referenced but not set (a default form, if any, applies): {}",
                substitution.unset.join(", ")
            );
        }
    }
    if !output.results.is_empty() {
        let _ = writeln!(out, "results:");
        for result in &output.results {
            let _ = writeln!(out, "  {}", redact.message(&result.to_string()));
        }
    }
    let verdict = if output.results.iter().any(|r| r.severity == Severity::Error) { "failed" } else { "ok" };
    let _ = writeln!(out, "render: {verdict}");
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    Mermaid,
    Dot,
}

/// Nodes and edges of one graph: kustomizations by name, subinstallations as `<scope>/<name>`.
fn graph_parts(output: &Output) -> (Vec<String>, Vec<(String, String)>) {
    let features = &output.report.features;
    let own = features.blueprint.as_ref().map(|b| b.kustomize.as_slice()).unwrap_or_default();
    let kustomizations: Vec<&crate::features::model::Kustomization> =
        features.crd_layers.iter().chain(own).chain(&features.flux_tiers).collect();
    let mut nodes: Vec<String> = kustomizations.iter().map(|k| k.name.clone()).collect();
    let mut edges: Vec<(String, String)> =
        kustomizations.iter().flat_map(|k| k.depends_on.iter().map(|d| (d.clone(), k.name.clone()))).collect();
    for scope in &output.report.imports.scopes {
        for (name, after) in &scope.subinstallations {
            let node = format!("{}/{name}", scope.name);
            edges.extend(after.iter().map(|a| (format!("{}/{a}", scope.name), node.clone())));
            nodes.push(node);
        }
    }
    (nodes, edges)
}

/// The dependency graph: an edge `a --> b` means `b` depends on `a` (a is applied first).
pub fn graph(output: &Output, format: GraphFormat) -> String {
    let mut out = String::new();
    let (nodes, edges) = graph_parts(output);
    match format {
        GraphFormat::Mermaid => {
            let _ = writeln!(out, "flowchart TD");
            for node in &nodes {
                let _ = writeln!(out, "  {}[\"{}\"]", mermaid_id(node), node.replace('"', "#quot;"));
            }
            for (from, to) in &edges {
                let _ = writeln!(out, "  {} --> {}", mermaid_id(from), mermaid_id(to));
            }
        }
        GraphFormat::Dot => {
            let _ = writeln!(out, "digraph blueprint {{");
            let _ = writeln!(out, "  rankdir=LR;");
            for node in &nodes {
                let _ = writeln!(out, "  {node:?};");
            }
            for (from, to) in &edges {
                let _ = writeln!(out, "  {from:?} -> {to:?};");
            }
            let _ = writeln!(out, "}}");
        }
    }
    out
}

/// Mermaid node ids may not hold most punctuation: other characters are hex-escaped, so distinct
/// names stay distinct ids; the names themselves are shown as labels.
fn mermaid_id(name: &str) -> String {
    let mut id = String::from("k_");
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c);
        } else {
            let _ = write!(id, "_{:x}_", c as u32);
        }
    }
    id
}
