//! `render-blueprint`: a KRM function that renders blueprints into Kubernetes and Flux
//! configuration. See README.md and docs/ for what it does.
//!
//! Module map: `doc` (value model and YAML/JSON), `diag` (problems as data), `krm` (ResourceList
//! and annotations), `model` (schemas of configuration kinds), `config` (the functionConfig
//! kind), `package` (paths and file access), `render` (the render state the steps share), one
//! module per step (`values`, `imports`, `policy`, `features`, `repeat`, and `transform`, which
//! applies `patch` and `subst` to every item), `pipeline` (composes the steps, no I/O),
//! `diff` (two renders compared, no I/O), `fluxbuild` (what Flux would apply for each Flux Kustomization of a render: the decisions
//! around a real kustomize build, no I/O) and `cli` (the only place that touches stdin, stdout,
//! files and the environment: arguments, exit codes and dispatch in `cli/mod.rs`, each way of
//! running the binary in a file of its own, and the one place a render's `pipeline::Input` is
//! built in `cli/input.rs`). Modules are drawn as if they were crates: their uses form no cycle
//! (`tests/module_cycles.rs`).
#![forbid(unsafe_code)]

pub mod cli;
pub mod config;
pub mod diag;
pub mod diff;
pub mod doc;
pub mod explain;
pub mod expr;
pub mod features;
pub mod fluxbuild;
pub mod help;
pub mod imports;
pub mod jsonnet;
pub mod krm;
pub mod limits;
pub mod model;
pub mod package;
pub mod patch;
pub mod pipeline;
pub mod policy;
pub mod render;
pub mod repeat;
pub mod selector;
pub mod subst;
pub mod template;
pub mod transform;
pub mod values;
