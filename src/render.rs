//! The render state: what every step reads and extends, and what steps hand to later steps.
//! It sits below the steps and the pipeline that runs them, so a step never imports its caller;
//! each step returns its own report and the pipeline assembles them.

use crate::config::{self, FunctionConfig};
use crate::diag::Diagnostic;
use crate::doc::{Map, Value};
use crate::krm::{type_of, Item};
use crate::limits::Budget;
use crate::model::policy::ImplementationSpec;
use crate::template::BackendLookup;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// An item a step produced. `substitute: false` keeps Flux's post-build substitution off it: the
/// Flux objects we emit are applied by Flux, which never substitutes them itself.
pub struct Generated {
    pub item: Value,
    pub substitute: bool,
}

/// Where a value `explain` prints came from, and whether it must be redacted there: a label
/// such as `spec.values`, `-f values.yaml` or `ConfigValues cv`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    pub label: String,
    pub secret: bool,
}

/// Where each value came from, for `explain`: the layer that last set each path. A path is a
/// top-level key, or deeper where a later layer merged into an earlier one's map (`db` from
/// `spec.values`, `db.port` from `--set`). Built once per render from the layers' keys only.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    pub layers: Vec<Source>,
    /// Path segments → index into `layers`. A path's descendants sort right after it.
    pub paths: BTreeMap<Vec<String>, usize>,
}

impl Sources {
    /// Records that `layer` (labelled `source`) is merged over `base`: the paths it replaces
    /// now come from it, and what they held before is forgotten. Call before merging. Walks
    /// with a stack, as [`crate::doc::deep_merge`] does, so no input depth exhausts it.
    pub fn record(&mut self, base: &Value, layer: &Value, source: Source) {
        let index = self.layers.len();
        self.layers.push(source);
        let mut pending: Vec<(Vec<String>, &Value, &Value)> = vec![(Vec::new(), base, layer)];
        while let Some((path, base, layer)) = pending.pop() {
            let Value::Object(overlay) = layer else { continue };
            for (key, value) in overlay {
                let mut at = path.clone();
                at.push(key.clone());
                match base.get(key) {
                    Some(inner @ Value::Object(_)) if value.is_object() => pending.push((at, inner, value)),
                    _ => {
                        let below: Vec<Vec<String>> = self
                            .paths
                            .range(at.clone()..)
                            .map(|(p, _)| p)
                            .take_while(|p| p.starts_with(&at))
                            .cloned()
                            .collect();
                        for path in below {
                            self.paths.remove(&path);
                        }
                        self.paths.insert(at, index);
                    }
                }
            }
        }
    }

    /// The paths under top-level `key` (itself first, when one layer set it whole) and their
    /// sources.
    pub fn under<'a>(&'a self, key: &'a str) -> impl Iterator<Item = (&'a [String], &'a Source)> + 'a {
        let start = vec![key.to_string()];
        self.paths
            .range(start..)
            .take_while(move |(p, _)| p.first().is_some_and(|first| first == key))
            .filter_map(|(p, i)| Some((p.as_slice(), self.layers.get(*i)?)))
    }
}

/// An implementation the policy step chose: what its resources, features and executions see
/// when the imports step renders them.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub interface: String,
    /// `{name, path, revision, parameters, typeInstances}` for `implementation` in templates.
    pub scope: Value,
    pub spec: ImplementationSpec,
    /// The Implementation item, for the diagnostics of its render.
    pub origin: crate::diag::Origin,
}

/// The state every step reads and extends.
pub struct Render {
    pub config: FunctionConfig,
    pub items: Vec<Item>,
    /// Items produced by this render, finished (annotated) and appended at the end.
    pub generated: Vec<Generated>,
    pub results: Vec<Diagnostic>,
    pub values: Value,
    /// The values without schema defaults, when there are some: what the operator set, which
    /// Windsor v0.9 keeps above facet config (its `GetSetValues`).
    pub set_values: Option<Value>,
    /// Where each value came from; set by the values step, read by imports for secret values.
    pub value_sources: Sources,
    /// The Windsor schema the values step read (or why it could not), when a render composes
    /// Windsor and has one: the features step takes the paths it declares as known.
    pub windsor_schema: Option<Result<Map, String>>,
    /// Whether Windsor's value layers are applied (by the values step, or by the features step
    /// for features of a chosen Implementation).
    pub windsor_layers: bool,
    /// Values layers over the config's own, each with the label `explain` names it by.
    pub overrides: Vec<(String, Value)>,
    /// Resolved KOTS config values (the `config` binding of templates); set by `repeat::load`.
    pub config_values: Map,
    /// Where each KOTS config value came from, by item name; secret for `type: password`.
    pub config_sources: HashMap<String, Source>,
    /// Resolves the `backend` template helper; set by the policy step.
    pub backends: BackendLookup,
    /// Implementations chosen by policy, rendered in their own scope.
    pub implementations: Vec<Chosen>,
    /// Features contributed by chosen implementations, each with the values it sees.
    pub scoped_features: Vec<(Value, Value, crate::diag::Origin)>,
    /// What every evaluator of this render may still produce and spend.
    pub budget: Arc<Budget>,
    /// Where `jsonnet()` evaluations run; `None`: on threads of this process.
    pub jsonnet: Option<crate::jsonnet::Isolate>,
    /// The environment variables Windsor's `env()` reads (the command line's snapshot).
    pub environment: Arc<Environment>,
}

/// Environment variables by name, as the command line took them.
pub type Environment = std::collections::BTreeMap<String, String>;

impl Render {
    pub fn new(config: FunctionConfig, items: Vec<Item>, overrides: Vec<(String, Value)>) -> Self {
        Self {
            config,
            items,
            generated: Vec::new(),
            results: Vec::new(),
            values: Value::Null,
            set_values: None,
            value_sources: Sources::default(),
            windsor_schema: None,
            windsor_layers: false,
            overrides,
            config_values: Map::new(),
            config_sources: HashMap::new(),
            backends: Arc::new(|_: &str, _: &str| Ok(Value::Null)),
            implementations: Vec::new(),
            scoped_features: Vec::new(),
            budget: Arc::new(Budget::default()),
            jsonnet: None,
            environment: Arc::default(),
        }
    }

    pub fn failed(&self) -> bool {
        self.results.iter().any(Diagnostic::is_error)
    }
}

/// The configuration kinds: read as configuration, kept in the package, marked local-config. A
/// Landscaper `InstallationTemplate` (a subinstallation kept in its own file) is consumed the
/// same way.
pub const CONFIGURATION_KINDS: [(&str, &str); 10] = [
    ("blueprints.windsorcli.dev/v1alpha1", "Feature"),
    ("blueprints.windsorcli.dev/v1alpha1", "Facet"),
    ("blueprints.windsorcli.dev/v1alpha1", "Blueprint"),
    ("landscaper.gardener.cloud/v1alpha1", "Blueprint"),
    ("landscaper.gardener.cloud/v1alpha1", "InstallationTemplate"),
    ("kots.io/v1beta1", "Config"),
    ("kots.io/v1beta1", "ConfigValues"),
    ("fn.blueprint.dev/v1alpha1", "Policy"),
    ("fn.blueprint.dev/v1alpha1", "Implementation"),
    (config::API_VERSION, config::KIND),
];

pub fn is_configuration(item: &Value) -> bool {
    CONFIGURATION_KINDS.contains(&type_of(item))
}
