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

/// The dependency graph: an edge `a --> b` means `b` depends on `a` (a is applied first).
pub fn graph(output: &Output, format: GraphFormat) -> String {
    let mut out = String::new();
    let kustomizations = output.report.features.blueprint.as_ref().map(|b| b.kustomize.as_slice()).unwrap_or_default();
    match format {
        GraphFormat::Mermaid => {
            let _ = writeln!(out, "flowchart TD");
            for k in kustomizations {
                let _ = writeln!(out, "  {}[\"{}\"]", mermaid_id(&k.name), k.name.replace('"', "#quot;"));
            }
            for k in kustomizations {
                for dependency in &k.depends_on {
                    let _ = writeln!(out, "  {} --> {}", mermaid_id(dependency), mermaid_id(&k.name));
                }
            }
        }
        GraphFormat::Dot => {
            let _ = writeln!(out, "digraph blueprint {{");
            let _ = writeln!(out, "  rankdir=LR;");
            for k in kustomizations {
                let _ = writeln!(out, "  {:?};", k.name);
            }
            for k in kustomizations {
                for dependency in &k.depends_on {
                    let _ = writeln!(out, "  {dependency:?} -> {:?};", k.name);
                }
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
