//! Flux output, as Windsor applies it (windsorcli/cli v0.8.1, `ApplyBlueprint` in
//! pkg/provisioner/kubernetes/kubernetes_manager.go and `ToFluxKustomization` in
//! api/v1alpha1/blueprint_types.go), in Windsor's order: the source objects (`GitRepository`,
//! `OCIRepository`), the `values-common` ConfigMap, then for each kustomization its `values-<name>`
//! ConfigMap and its `kustomize.toolkit.fluxcd.io/v1` `Kustomization`.
//!
//! Defaults follow windsorcli/cli (pkg/constants): Kustomizations reconcile every 1m, retry after
//! 2m, time out after 5m, wait, prune, deletion policy `WaitForTermination`; sources every 1m with
//! a 2m timeout; namespace `system-gitops`, path prefix `kustomize`. Fields are written as Flux's
//! API types serialize them: durations in Go's spelling (`1m0s`), `force` and `wait` only when
//! true (`omitempty`), ConfigMap data in key order.
//!
//! With Windsor v0.9 ([`WindsorVersion::V09`]) the defaults are v0.9.0's (pkg/constants, `ToFluxKustomization`,
//! `applyBlueprintGitRepository`): a Kustomization on the blueprint's own repository reconciles
//! every 5m, one on a named source every 1h; the repository's source object every 1m, a named
//! source every 1h; a `template` source without a URL is the blueprint's own; any URL with a
//! scheme is kept; and every ConfigMap of the blueprint is read by every Kustomization.

use super::model::{Blueprint, Kustomization, Source};
use crate::config::{FluxSettings, WindsorVersion};
use crate::doc::{dotted, Map, Value};
use crate::expr::{go_format, to_text};
use serde_json::json;
use std::collections::HashMap;

pub const DEFAULT_NAMESPACE: &str = "system-gitops";
const DEFAULT_PATH_PREFIX: &str = "kustomize";
const SOURCE_API_VERSION: &str = "source.toolkit.fluxcd.io/v1";

/// Every object, in the order Windsor applies them. `exists(kind, name, namespace)` says whether
/// the package already holds a source object, which is then not generated. `shared` holds the
/// ConfigMaps besides its own that every Kustomization's post-build reads (Windsor's
/// `blueprint.ConfigMaps`: `values-common`, and with v0.9 `values-<name>`), in order, with data.
/// Each is written once, even empty and even for a destroy-only kustomization: a Kustomization
/// naming a ConfigMap that does not exist never reconciles.
pub fn objects(
    blueprint: &Blueprint,
    settings: &FluxSettings,
    shared: &[(String, Map)],
    labels: Option<&Map>,
    version: WindsorVersion,
    exists: &dyn Fn(&str, &str, &str) -> bool,
) -> Vec<Value> {
    let namespace = settings.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    let prefix = settings.path_prefix.as_deref().unwrap_or(DEFAULT_PATH_PREFIX);
    let mut objects = Vec::new();
    if settings.sources.unwrap_or(true) {
        let sources = source_objects(blueprint, namespace, version);
        objects.extend(
            sources
                .into_iter()
                .filter(|s| !exists(crate::krm::type_of(s).1, crate::krm::name_of(s), crate::krm::namespace_of(s))),
        );
    }
    let shared_data: HashMap<&str, &Map> = shared.iter().map(|(name, data)| (name.as_str(), data)).collect();
    let destroy_only =
        |k: &Kustomization| version == WindsorVersion::V09 && k.extra.get("destroyOnly") == Some(&Value::Bool(true));
    // A kustomization named `common` writes values-common again with its own substitutions, and
    // Windsor's second write wins: one object, the last data.
    let common_overwritten =
        blueprint.kustomize.iter().any(|k| k.name == "common" && !k.substitutions.is_empty() && !destroy_only(k));
    if let Some(common) = shared_data.get(COMMON).filter(|_| !common_overwritten) {
        objects.push(config_map(COMMON, namespace, common));
    }
    let names: Vec<&str> = shared.iter().map(|(name, _)| name.as_str()).collect();
    for k in &blueprint.kustomize {
        // v0.9's `destroyOnly` kustomizations run only at `windsor down`: `ApplyBlueprint` skips them.
        let destroy_only = destroy_only(k);
        let own = format!("values-{}", k.name);
        // `ApplyBlueprint` writes the shared ConfigMaps, then a kustomization's own over its
        // shared one: the own data (features' and the values' substitutions) win when it has any.
        if !k.substitutions.is_empty() && !destroy_only {
            objects.push(config_map(&own, namespace, &k.substitutions));
        } else if let Some(data) = shared_data.get(own.as_str()).filter(|_| own != COMMON) {
            objects.push(config_map(&own, namespace, data));
        }
        if !destroy_only {
            let mut object = kustomization(blueprint, k, namespace, prefix, &names, version);
            if let Some(labels) = labels {
                object["metadata"]["labels"] = Value::Object(labels.clone());
                object["spec"]["commonMetadata"] = json!({"labels": labels});
            }
            objects.push(object);
        }
    }
    objects
}

const COMMON: &str = "values-common";

/// The ConfigMaps every Kustomization reads (Windsor's `blueprint.ConfigMaps`): `values-common`
/// when it has data (the blueprint's substitutions, then [`common_values`] over them, as
/// `applyCommonSubstitutions` layers them), and with v0.9 `values-<name>` for each kustomization
/// `values.substitutions.<name>` sets (`own`; Go map order there, sorted here).
pub fn shared_config_maps(
    blueprint: &Blueprint,
    values: &Value,
    context: Option<&str>,
    version: WindsorVersion,
    own: Vec<(String, Map)>,
) -> Vec<(String, Map)> {
    let mut common = blueprint.substitutions.clone();
    common.extend(common_values(values, context, version));
    let mut shared: Vec<(String, Map)> = Vec::new();
    if !common.is_empty() {
        shared.push((COMMON.into(), common));
    }
    if version == WindsorVersion::V09 {
        shared.extend(own.into_iter().map(|(name, data)| (format!("values-{name}"), data)));
        shared.sort_by(|a, b| a.0.cmp(&b.0));
        shared.dedup_by(|a, b| a.0 == b.0);
    }
    shared
}

/// The `values-common` data: `values.substitutions.common`, then the variables Windsor derives
/// from its configuration (`mergeLegacySpecialVariables`), which win on a shared key: `CONTEXT`
/// from `spec.windsor.context`. Windsor's `BUILD_ID` comes from its build-id file, which a render
/// does not have.
fn common_values(values: &Value, context: Option<&str>, version: WindsorVersion) -> Map {
    let common = values.get("substitutions").and_then(|s| s.get("common")).and_then(Value::as_object);
    let mut data: Map = common.into_iter().flatten().map(|(k, v)| (k.clone(), Value::String(to_text(v)))).collect();
    // Windsor's GetString: `%v` of the value, empty when unset.
    let text = |path: &str| match dotted(values, path) {
        None | Some(Value::Null) => String::new(),
        Some(value) => go_format(value),
    };
    let mut set = |key: &str, value: String| {
        if !value.is_empty() {
            data.insert(key.into(), Value::String(value));
        }
    };
    set("DOMAIN", text("dns.domain"));
    set("CONTEXT", context.unwrap_or_default().to_string());
    set("CONTEXT_ID", text("id"));
    let (start, end) = (text("network.loadbalancer_ips.start"), text("network.loadbalancer_ips.end"));
    // v0.9 leaves the load balancer variables out on Docker Desktop, which has no such range.
    if version == WindsorVersion::V08 || text("workstation.runtime") != "docker-desktop" {
        if !start.is_empty() || !end.is_empty() {
            set("LOADBALANCER_IP_RANGE", format!("{start}-{end}"));
        }
        set("LOADBALANCER_IP_START", start);
        set("LOADBALANCER_IP_END", end);
    }
    set("REGISTRY_URL", text("docker.registry_url"));
    // The first worker volume `host:container` gives its container side.
    if let Some(Value::Array(volumes)) = dotted(values, "cluster.workers.volumes") {
        if let Some(first) = volumes.first() {
            let first = match first {
                Value::String(s) => s.clone(),
                other => go_format(other),
            };
            set("LOCAL_VOLUME_PATH", first.split(':').nth(1).unwrap_or_default().to_string());
        }
    }
    data
}

/// ConfigMap data come out in key order, as the API serializes Windsor's Go maps.
fn config_map(name: &str, namespace: &str, data: &Map) -> Value {
    let mut entries: Vec<(&String, &Value)> = data.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let data: Map = entries.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut object =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}});
    // The API leaves out an empty `data` (`omitempty`), as Windsor's empty ConfigMap shows.
    if !data.is_empty() {
        object["data"] = Value::Object(data);
    }
    object
}

/// The blueprint's repository (named after the blueprint, when it has a URL), then every
/// source with a name and URL. A later source of the same name replaces an earlier one in place,
/// as Windsor's second apply of one name does.
fn source_objects(blueprint: &Blueprint, namespace: &str, version: WindsorVersion) -> Vec<Value> {
    let mut named: Vec<(String, Value)> = Vec::new();
    let mut add = |name: &str, source: &Source, is_repository: bool| {
        if name.is_empty() || source.url.is_empty() {
            return;
        }
        let object = source_object(name, source, namespace, is_repository, version);
        match named.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = object,
            None => named.push((name.to_string(), object)),
        }
    };
    if let Some(repository) = &blueprint.repository {
        add(&blueprint.metadata.name, repository, true);
    }
    for source in &blueprint.sources {
        add(&source.name, source, false);
    }
    named.into_iter().map(|(_, object)| object).collect()
}

fn reference_field<'s>(source: &'s Source, key: &str) -> &'s str {
    source.extra.get("ref").and_then(|r| r.get(key)).and_then(Value::as_str).unwrap_or_default()
}

/// A `GitRepository`, or an `OCIRepository` for an `oci://` URL, as Windsor's
/// `applyBlueprintGitRepository` / `applyBlueprintOCIRepository` build them.
fn source_object(name: &str, source: &Source, namespace: &str, is_repository: bool, version: WindsorVersion) -> Value {
    let secret = source.extra.get("secretName").and_then(Value::as_str).filter(|s| !s.is_empty());
    let (tag, semver, commit) =
        (reference_field(source, "tag"), reference_field(source, "semver"), reference_field(source, "commit"));
    let mut spec = Map::new();
    let kind = if source.url.starts_with("oci://") {
        // A tag in the URL (`oci://host/repo:v1`) wins over `ref`; without either, `latest`.
        let mut url = source.url.as_str();
        let mut reference = Map::new();
        if let Some(colon) = url.rfind(':').filter(|&c| c > "oci://".len()) {
            let tag = &url[colon + 1..];
            if !tag.is_empty() && !tag.contains('/') {
                reference.insert("tag".into(), json!(tag));
                url = &url[..colon];
            }
        }
        if reference.is_empty() {
            for (key, value) in [("digest", commit), ("tag", tag), ("semver", semver)] {
                if !value.is_empty() {
                    reference.insert(key.into(), json!(value));
                }
            }
        }
        if reference.is_empty() {
            reference.insert("tag".into(), json!("latest"));
        }
        spec.insert("url".into(), json!(url));
        spec.insert("ref".into(), Value::Object(reference));
        "OCIRepository"
    } else {
        let url = match version {
            WindsorVersion::V08 => source.url.as_str(),
            WindsorVersion::V09 => source.url.trim(),
        };
        // v0.8.1 keeps http, https and ssh URLs; v0.9's `NormalizeRemoteURL` any with a scheme.
        let has_scheme = match version {
            WindsorVersion::V08 => ["http://", "https://", "ssh://"].iter().any(|scheme| url.starts_with(scheme)),
            WindsorVersion::V09 => has_url_scheme(url),
        };
        let url = if url.starts_with("git@") && url.contains(':') {
            format!("ssh://{}", url.replacen(':', "/", 1))
        } else if has_scheme {
            url.to_string()
        } else {
            format!("https://{url}")
        };
        let branch = reference_field(source, "branch");
        let mut reference = Map::new();
        for (key, value) in [("branch", branch), ("tag", tag), ("semver", semver), ("commit", commit)] {
            if !value.is_empty() {
                reference.insert(key.into(), json!(value));
            }
        }
        // The blueprint's own repository defaults to branch main (Windsor's setRepositoryDefaults).
        if is_repository && reference.is_empty() {
            reference.insert("branch".into(), json!("main"));
        }
        spec.insert("url".into(), json!(url));
        spec.insert("ref".into(), Value::Object(reference));
        "GitRepository"
    };
    if let Some(secret) = secret {
        spec.insert("secretRef".into(), json!({"name": secret}));
    }
    // v0.9's `FluxSourceInterval`: the blueprint's own repository 1m, a named (pinned) source 1h.
    let interval = if version == WindsorVersion::V09 && !is_repository { "1h0m0s" } else { "1m0s" };
    spec.insert("interval".into(), json!(interval));
    spec.insert("timeout".into(), json!("2m0s"));
    json!({
        "apiVersion": SOURCE_API_VERSION,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    })
}

/// v0.9's `hasExplicitURLScheme`: a letter, then letters, digits, `+`, `-` or `.`, then `://`.
fn has_url_scheme(url: &str) -> bool {
    let Some(end) = url.find("://").filter(|&end| end > 0) else { return false };
    let scheme = &url.as_bytes()[..end];
    scheme[0].is_ascii_alphabetic()
        && scheme[1..].iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

/// Windsor's path rule: empty is the prefix itself; a path already under the prefix is kept.
fn flux_path(prefix: &str, path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path.trim_matches('/');
    if path.is_empty() || prefix.is_empty() {
        return if path.is_empty() { prefix.to_string() } else { path.to_string() };
    }
    if path == prefix || path.starts_with(&format!("{prefix}/")) {
        return path.to_string();
    }
    format!("{prefix}/{path}")
}

/// `OCIRepository` when the named source's URL is `oci://…`, else `GitRepository`; the name is
/// the kustomization's source, or the blueprint's name for its own repository (in v0.9 also
/// for `template` when no `template` source has a URL: the local template is the blueprint's own).
fn source_ref(blueprint: &Blueprint, k: &Kustomization, version: WindsorVersion) -> Value {
    let local_template = |source: &str| {
        version == WindsorVersion::V09
            && source == "template"
            && !blueprint.sources.iter().any(|s| s.name == "template" && !s.url.is_empty())
    };
    let (name, url) = match &k.source {
        Some(source) if !local_template(source) => {
            (source.clone(), blueprint.sources.iter().find(|s| &s.name == source).map(|s| s.url.as_str()))
        }
        _ => (blueprint.metadata.name.clone(), blueprint.repository.as_ref().map(|r| r.url.as_str())),
    };
    let kind = if url.is_some_and(|u| u.starts_with("oci://")) { "OCIRepository" } else { "GitRepository" };
    json!({"kind": kind, "name": name})
}

/// A duration as Windsor's `metav1.Duration` writes it: Go's spelling (`1m0s`, `1h30m0s`); unset
/// or zero is the default. Text Go cannot parse is kept as written (Flux's schema rejects it).
fn duration(value: Option<&str>, default_nanos: u128) -> String {
    match value {
        None => go_duration::format(default_nanos),
        Some(text) => match go_duration::parse(text) {
            Some((_, 0)) => go_duration::format(default_nanos),
            Some((negative, nanos)) => format!("{}{}", if negative { "-" } else { "" }, go_duration::format(nanos)),
            None => text.to_string(),
        },
    }
}

const MINUTE: u128 = 60_000_000_000;

fn kustomization(
    blueprint: &Blueprint,
    k: &Kustomization,
    namespace: &str,
    prefix: &str,
    shared: &[&str],
    version: WindsorVersion,
) -> Value {
    let mut spec = Map::new();
    spec.insert("path".into(), json!(flux_path(prefix, &k.path)));
    let mut source_ref = source_ref(blueprint, k, version);
    // v0.9's `namespace` moves the Kustomization object, its sourceRef then naming the source's.
    let text = |key: &str| match version {
        WindsorVersion::V08 => None,
        WindsorVersion::V09 => k.extra.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()),
    };
    let object_namespace = match text("namespace") {
        Some(own) if own != namespace => {
            source_ref["namespace"] = json!(namespace);
            own
        }
        _ => namespace,
    };
    // v0.9's `FluxKustomizationInterval`: 5m on the blueprint's own repository, else 1h.
    let default_interval = match version {
        WindsorVersion::V08 => MINUTE,
        WindsorVersion::V09 if source_ref["name"] == blueprint.metadata.name.as_str() => 5 * MINUTE,
        WindsorVersion::V09 => 60 * MINUTE,
    };
    spec.insert("sourceRef".into(), source_ref);
    if !k.depends_on.is_empty() {
        let depends_on: Vec<Value> = k.depends_on.iter().map(|d| json!({"name": d, "namespace": namespace})).collect();
        spec.insert("dependsOn".into(), Value::Array(depends_on));
    }
    spec.insert("interval".into(), json!(duration(k.interval.as_deref(), default_interval)));
    spec.insert("retryInterval".into(), json!(duration(k.retry_interval.as_deref(), 2 * MINUTE)));
    spec.insert("timeout".into(), json!(duration(k.timeout.as_deref(), 5 * MINUTE)));
    // Flux's API drops `wait` and `force` when false (`omitempty`), so Windsor's object has them
    // only when true; `prune` is always written.
    if k.wait.unwrap_or(true) {
        spec.insert("wait".into(), json!(true));
    }
    if k.force.unwrap_or(false) {
        spec.insert("force".into(), json!(true));
    }
    spec.insert("prune".into(), json!(k.prune.unwrap_or(true)));
    // `destroy: false` keeps the workloads when the Kustomization is deleted (Windsor's `down`).
    let deletion_policy = if k.destroy == Some(false) { "MirrorPrune" } else { "WaitForTermination" };
    spec.insert("deletionPolicy".into(), json!(deletion_policy));
    if let Some(target) = text("targetNamespace") {
        spec.insert("targetNamespace".into(), json!(target));
    }
    // v0.9's `decryption`: the provider, and the Secret holding the key.
    if let (WindsorVersion::V09, Some(Value::Object(decryption))) = (version, k.extra.get("decryption")) {
        let mut out = Map::new();
        out.insert("provider".into(), decryption.get("provider").cloned().unwrap_or_else(|| json!("")));
        if let Some(name) = decryption.get("secretRef").and_then(|r| r.get("name")) {
            out.insert("secretRef".into(), json!({"name": name}));
        }
        spec.insert("decryption".into(), Value::Object(out));
    }
    if !k.components.is_empty() {
        spec.insert("components".into(), json!(k.components));
    }
    if !k.patches.is_empty() {
        let patches: Vec<Value> = k
            .patches
            .iter()
            .map(|p| {
                let mut patch = Map::new();
                patch.insert("patch".into(), json!(p.patch.clone().unwrap_or_default()));
                // Windsor's conversion keeps only kind, name and namespace of a target; we keep every
                // selector field: dropping `labelSelector` or `group` would widen the patch to
                // resources its author did not select.
                if let Some(target) = &p.target {
                    patch.insert("target".into(), Value::Object(target.clone()));
                }
                Value::Object(patch)
            })
            .collect();
        spec.insert("patches".into(), Value::Array(patches));
    }
    let mut substitute_from = Vec::new();
    let own = format!("values-{}", k.name);
    if !k.substitutions.is_empty() {
        substitute_from.push(json!({"kind": "ConfigMap", "name": own}));
    }
    for name in shared {
        // v0.9 lists a kustomization's own ConfigMap again when it is a shared one; once is enough.
        if version == WindsorVersion::V09 && *name == own && !k.substitutions.is_empty() {
            continue;
        }
        substitute_from.push(json!({"kind": "ConfigMap", "name": name}));
    }
    // Windsor's CRD layers take no post-build substitution: CRD descriptions hold `${…}` text.
    // (v0.9 reserves their names, so no other kustomization is named so.)
    let crd_layer = version == WindsorVersion::V09 && super::barriers::is_crd_layer_name(&k.name);
    if !substitute_from.is_empty() && !crd_layer {
        spec.insert("postBuild".into(), json!({"substituteFrom": substitute_from}));
    }
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": k.name, "namespace": object_namespace},
        "spec": spec,
    })
}

/// Go's `time.ParseDuration` and `Duration.String`, for the durations Windsor round-trips.
mod go_duration {
    const UNITS: &[(&str, u128)] = &[
        ("ns", 1),
        ("us", 1_000),
        ("\u{b5}s", 1_000),
        ("\u{3bc}s", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ];
    /// Go's limit: the largest `time.Duration`.
    const MAX: u128 = i64::MAX as u128;

    /// `(negative, nanoseconds)`, or None where Go reports an error.
    pub fn parse(text: &str) -> Option<(bool, u128)> {
        let (negative, mut rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if rest == "0" {
            return Some((negative, 0));
        }
        if rest.is_empty() {
            return None;
        }
        let mut total: u128 = 0;
        while !rest.is_empty() {
            let whole_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let whole = &rest[..whole_len];
            rest = &rest[whole_len..];
            let mut fraction = "";
            if let Some(after) = rest.strip_prefix('.') {
                let len = after.bytes().take_while(u8::is_ascii_digit).count();
                fraction = &after[..len];
                rest = &after[len..];
            }
            if whole.is_empty() && fraction.is_empty() {
                return None;
            }
            let unit_len = rest.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(rest.len());
            let unit = UNITS.iter().find(|(name, _)| *name == &rest[..unit_len])?.1;
            rest = &rest[unit_len..];
            let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().ok().filter(|w| *w <= MAX)? };
            let mut value = whole.checked_mul(unit)?;
            // The fraction's digits beyond what a nanosecond resolves are dropped, as Go does.
            let (mut numerator, mut scale) = (0u128, 1u128);
            for digit in fraction.bytes().take(30) {
                numerator = numerator * 10 + u128::from(digit - b'0');
                scale *= 10;
            }
            value += numerator * unit / scale;
            total = total.checked_add(value).filter(|t| *t <= MAX)?;
        }
        Some((negative, total))
    }

    /// `Duration.String` of a non-negative duration.
    pub fn format(nanos: u128) -> String {
        if nanos == 0 {
            return "0s".into();
        }
        if nanos < 1_000_000_000 {
            let (unit, scale, digits) = match nanos {
                n if n < 1_000 => ("ns", 1, 0),
                n if n < 1_000_000 => ("\u{b5}s", 1_000, 3),
                _ => ("ms", 1_000_000, 6),
            };
            return format!("{}{unit}", with_fraction(nanos / scale, nanos % scale, digits));
        }
        let seconds = nanos / 1_000_000_000;
        let text = with_fraction(seconds % 60, nanos % 1_000_000_000, 9);
        let minutes = seconds / 60;
        match (minutes / 60, minutes % 60) {
            (0, 0) => format!("{text}s"),
            (0, m) => format!("{m}m{text}s"),
            (h, m) => format!("{h}h{m}m{text}s"),
        }
    }

    /// `whole.fraction` with the fraction's trailing zeros (and a bare point) dropped.
    fn with_fraction(whole: u128, fraction: u128, digits: usize) -> String {
        if fraction == 0 {
            return whole.to_string();
        }
        let fraction = format!("{fraction:0digits$}");
        format!("{whole}.{}", fraction.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_windsor() {
        assert_eq!(flux_path("kustomize", "ingress/base"), "kustomize/ingress/base");
        assert_eq!(flux_path("kustomize", ""), "kustomize");
        assert_eq!(flux_path("kustomize", "kustomize/x"), "kustomize/x");
        assert_eq!(flux_path("kustomize", "a\\b"), "kustomize/a/b");
    }

    #[test]
    fn durations_spelled_as_go_does() {
        assert_eq!(duration(None, MINUTE), "1m0s");
        assert_eq!(duration(None, 5 * MINUTE), "5m0s");
        assert_eq!(duration(Some("5m"), MINUTE), "5m0s");
        assert_eq!(duration(Some("90s"), MINUTE), "1m30s");
        assert_eq!(duration(Some("1h"), MINUTE), "1h0m0s");
        assert_eq!(duration(Some("1.5h"), MINUTE), "1h30m0s");
        assert_eq!(duration(Some("2h45m30.5s"), MINUTE), "2h45m30.5s");
        assert_eq!(duration(Some("30s"), MINUTE), "30s");
        assert_eq!(duration(Some("500ms"), MINUTE), "500ms");
        assert_eq!(duration(Some("1500us"), MINUTE), "1.5ms");
        assert_eq!(duration(Some("7ns"), MINUTE), "7ns");
        assert_eq!(duration(Some(".5s"), MINUTE), "500ms");
        // Zero takes the default, as Windsor's `Duration != 0` test does.
        assert_eq!(duration(Some("0s"), 2 * MINUTE), "2m0s");
        assert_eq!(duration(Some("0"), 2 * MINUTE), "2m0s");
        // Not a Go duration: kept for Flux's schema to reject.
        assert_eq!(duration(Some("5 minutes"), MINUTE), "5 minutes");
        assert_eq!(duration(Some("1d"), MINUTE), "1d");
        assert_eq!(duration(Some(""), MINUTE), "");
        assert_eq!(duration(Some("."), MINUTE), ".");
    }
}
