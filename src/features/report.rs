//! What the features step decided, for `explain` and `graph`.

use super::model::{Blueprint, Kustomization};
use crate::config::WindsorVersion;
use crate::doc::{Map, Value};

/// What the step decided, for `explain` and `graph`.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub features: Vec<FeatureDecision>,
    /// The merged blueprint, when there was one to merge.
    pub blueprint: Option<Blueprint>,
    /// The Windsor release the package was composed as (`spec.windsor.version`); `None` when
    /// there was nothing to compose.
    pub version: Option<WindsorVersion>,
    /// The Kustomizations Flux systems compile to (after the blueprint's own).
    pub flux_tiers: Vec<Kustomization>,
    /// The Kustomizations that install the CRDs: the blueprint's `crds`, then each source's
    /// (before the blueprint's own).
    pub crd_layers: Vec<Kustomization>,
}

#[derive(Clone, Debug)]
pub struct FeatureDecision {
    pub name: String,
    /// Where the feature was declared: its file, or `spec.features[i]`.
    pub origin: String,
    pub when: String,
    pub enabled: bool,
    /// The values the condition read, as `(path, value)`.
    pub reads: Vec<(String, Value)>,
    pub components: Vec<ComponentDecision>,
}

#[derive(Clone, Debug)]
pub struct ComponentDecision {
    /// `terraform` or `kustomization`.
    pub kind: &'static str,
    pub name: String,
    pub when: String,
    pub enabled: bool,
    pub reads: Vec<(String, Value)>,
    /// `appended`, `merged`, `replaced`, or `skipped`.
    pub action: &'static str,
}

/// What a version's composition hands to the checks and the Flux output both versions share.
pub(super) struct Composed {
    pub(super) blueprint: Blueprint,
    /// The blueprint Flux applies when its Kustomizations are not the blueprint's own: the CRD
    /// layers, the plain ones, then each Flux system's tiers.
    pub(super) compiled: Option<Blueprint>,
    /// The ConfigMaps every Kustomization reads, with their data.
    pub(super) shared: Vec<(String, Map)>,
    pub(super) crd_layers: Vec<Kustomization>,
    /// The Flux objects' namespace when the RenderBlueprint names none.
    pub(super) namespace: Option<String>,
    /// The labels on each Kustomization and its `commonMetadata`.
    pub(super) labels: Option<Map>,
    /// Whether the sources and shared ConfigMaps are applied without a Kustomization.
    pub(super) sources_alone: bool,
}
