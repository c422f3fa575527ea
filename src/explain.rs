//! Human-readable reports of a render: `explain` (every decision and the values behind it) and
//! `graph` (the kustomization dependency graph as Mermaid or DOT). Pure functions from a
//! [`pipeline::Output`] to text; the CLI prints them.

use crate::diag::Severity;
use crate::doc::Value;
use crate::features::{ComponentDecision, FeatureDecision};
use crate::pipeline::Output;
use std::fmt::Write;

fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "nil".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn on_off(enabled: bool) -> &'static str {
    if enabled {
        "on"
    } else {
        "off"
    }
}

fn write_reads(out: &mut String, indent: &str, when: &str, reads: &[(String, Value)]) {
    if when.trim().is_empty() {
        let _ = writeln!(out, "{indent}when: (empty: always on)");
        return;
    }
    let _ = writeln!(out, "{indent}when: {when}");
    for (path, value) in reads {
        let _ = writeln!(out, "{indent}  {path} = {}", value_text(value));
    }
}

fn write_feature(out: &mut String, feature: &FeatureDecision) {
    let _ = writeln!(out, "  {} [{}] from {}", feature.name, on_off(feature.enabled), feature.origin);
    write_reads(out, "    ", &feature.when, &feature.reads);
    for component in &feature.components {
        write_component(out, component);
    }
}

fn write_component(out: &mut String, component: &ComponentDecision) {
    let _ = writeln!(
        out,
        "    {} {} [{}]: {}",
        component.kind,
        component.name,
        on_off(component.enabled),
        component.action
    );
    if !component.when.trim().is_empty() {
        write_reads(out, "      ", &component.when, &component.reads);
    }
}

/// The `explain` report.
pub fn explain(output: &Output) -> String {
    let mut out = String::new();
    let report = &output.report;
    let _ = writeln!(out, "values:");
    match &report.values {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                let _ = writeln!(out, "  {key} = {}", value_text(value));
            }
        }
        _ => {
            let _ = writeln!(out, "  (none)");
        }
    }
    if !report.config.is_empty() {
        let _ = writeln!(out, "config (KOTS):");
        for (key, value) in &report.config {
            let _ = writeln!(out, "  {key} = {}", value_text(value));
        }
    }
    if !report.repeat.clones.is_empty() {
        let _ = writeln!(out, "clones:");
        for clone in &report.repeat.clones {
            let _ = writeln!(out, "  {} from {} ({} = {})", clone.clone, clone.source, clone.from, clone.value);
        }
    }
    if !report.policy.decisions.is_empty() {
        let _ = writeln!(out, "policy:");
        for decision in &report.policy.decisions {
            let _ = writeln!(out, "  interface {} ({})", decision.interface, decision.path);
            if !decision.rule.is_empty() {
                let _ = writeln!(out, "    rule: {}", decision.rule);
            }
            for (candidate, verdict) in &decision.candidates {
                let _ = writeln!(out, "    {candidate}: {verdict}");
            }
            let _ = writeln!(out, "    chosen: {}", decision.chosen.as_deref().unwrap_or("none"));
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
            let _ = writeln!(out, "  {} from {}: {}", import.name, import.source, import.verdict);
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
        let _ = writeln!(out, "features (applied in order of name):");
        for feature in &features.features {
            write_feature(&mut out, feature);
        }
    }
    if let Some(blueprint) = &features.blueprint {
        let _ = writeln!(out, "blueprint {}:", blueprint.metadata.name);
        for component in &blueprint.terraform {
            let source = component.source.as_deref().map(|s| format!(" (source {s})")).unwrap_or_default();
            let _ = writeln!(out, "  terraform {}{source}", component.path);
        }
        for kustomization in &blueprint.kustomize {
            let depends = if kustomization.depends_on.is_empty() {
                String::new()
            } else {
                format!(" (after {})", kustomization.depends_on.join(", "))
            };
            let _ = writeln!(out, "  kustomization {} -> {}{depends}", kustomization.name, kustomization.path);
        }
    }
    if !output.results.is_empty() {
        let _ = writeln!(out, "results:");
        for result in &output.results {
            let _ = writeln!(out, "  {result}");
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
    let kustomizations = output.report.features.blueprint.as_ref().map(|b| b.kustomize.as_slice()).unwrap_or_default();
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
