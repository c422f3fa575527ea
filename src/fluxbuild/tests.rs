use super::*;
use serde_json::json;

fn kustomization(name: &str, depends_on: &[&str]) -> Item {
    let depends: Vec<Value> = depends_on.iter().map(|d| json!({"name": d})).collect();
    Item::from(json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": "flux-system"},
        "spec": {"sourceRef": {"kind": "GitRepository", "name": "core"}, "path": "./k", "dependsOn": depends},
    }))
}

fn order_of(items: &[Item]) -> Result<Vec<String>, Vec<String>> {
    let (found, results) = kustomizations(items);
    assert!(results.is_empty());
    match build_order(&found, &|_| false) {
        (order, results) if results.is_empty() => Ok(order.into_iter().map(|i| found[i].id.name.clone()).collect()),
        (_, results) => Err(results.into_iter().map(|e| e.message.clone()).collect()),
    }
}

#[test]
fn dependencies_are_built_first_and_the_rest_keeps_render_order() {
    let items = [kustomization("apps", &["infra"]), kustomization("crds", &[]), kustomization("infra", &["crds"])];
    assert_eq!(order_of(&items), Ok(vec!["crds".into(), "infra".into(), "apps".into()]));
}

#[test]
fn a_cycle_and_a_missing_dependency_are_named() {
    let cycle = [kustomization("a", &["b"]), kustomization("b", &["a"])];
    let errors = order_of(&cycle).unwrap_err();
    assert!(errors[0].contains("flux-system/a -> flux-system/b -> flux-system/a"), "{errors:?}");
    let missing = [kustomization("a", &["gone"])];
    let errors = order_of(&missing).unwrap_err();
    assert!(errors[0].starts_with("depends on Kustomization flux-system/gone"), "{errors:?}");
}

/// What a cycle or a missing dependency blocks is left out, with what depends on it; the rest
/// is built, as the controller reconciles each Kustomization on its own.
#[test]
fn the_rest_is_built_around_a_cycle() {
    let items = [
        kustomization("a", &["b"]),
        kustomization("b", &["a"]),
        kustomization("after-a", &["a"]),
        kustomization("free", &[]),
        kustomization("orphan", &["gone"]),
    ];
    let (found, _) = kustomizations(&items);
    let (order, results) = build_order(&found, &|_| false);
    let built: Vec<&str> = order.iter().map(|&i| found[i].id.name.as_str()).collect();
    assert_eq!(built, ["free"]);
    let messages: Vec<&str> = results.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[2].contains("depends on Kustomization flux-system/a, which cannot be built"), "{messages:?}");
}

#[test]
fn source_flags_match_by_name_namespace_and_kind() {
    let source = SourceRef { kind: "GitRepository".into(), namespace: "flux-system".into(), name: "core".into() };
    for (flag, matches) in [
        ("core=dir", true),
        ("flux-system/core=dir", true),
        ("GitRepository/flux-system/core=dir", true),
        ("OCIRepository/flux-system/core=dir", false),
        ("other/core=dir", false),
    ] {
        let (pattern, dir) = SourcePattern::parse(flag).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(dir, "dir");
        assert_eq!(pattern.matches(&source), matches, "{flag}");
    }
    for flag in ["core", "core=", "a/b/c/d=dir", "/core=dir"] {
        assert!(SourcePattern::parse(flag).is_err(), "{flag}");
    }
}

#[test]
fn the_path_stays_inside_the_source_as_securejoin_keeps_it() {
    assert_eq!(path_in_source("./apps/../infra/./x"), vec!["infra", "x"]);
    assert_eq!(path_in_source("../../etc"), vec!["etc"]);
    assert!(path_in_source("./").is_empty());
}

/// fluxcd/pkg kustomize_generator_test.go `Test_Components` (commit e2cfd1a2d181, Apache-2.0):
/// the file's components, then the Kustomization's.
#[test]
fn components_are_the_files_then_the_kustomizations() {
    let cases: [(Option<Value>, &[&str], &[&str]); 3] = [
        (Some(json!({"resources": ["configmap.yaml"], "components": ["componentA"]})), &[], &["componentA"]),
        (None, &["componentB", "componentC"], &["componentB", "componentC"]),
        (
            Some(json!({"resources": ["configmap.yaml"], "components": ["componentA"]})),
            &["componentB", "componentC"],
            &["componentA", "componentB", "componentC"],
        ),
    ];
    for (existing, flux, expected) in cases {
        let object = json!({"spec": {"components": flux}});
        let kustomization = Kustomization {
            id: Name { namespace: "default".into(), name: "k".into() },
            source: SourceRef { kind: "GitRepository".into(), namespace: "default".into(), name: "s".into() },
            path: "./".into(),
            depends_on: Vec::new(),
            object,
        };
        let file = kustomization_file(existing, &GeneratedResources(Vec::new()), &kustomization, &|_| true)
            .unwrap_or_else(|err| panic!("{err}"));
        let components = file.get("components").cloned().unwrap_or(json!([]));
        assert_eq!(components, json!(expected));
    }
}

/// A component that is not local and relative is refused with Flux's words; a missing one is
/// skipped under ignoreMissingComponents.
#[test]
fn remote_components_are_refused_and_missing_ones_may_be_skipped() {
    let with = |spec: Value| Kustomization {
        id: Name { namespace: "default".into(), name: "k".into() },
        source: SourceRef { kind: "GitRepository".into(), namespace: "default".into(), name: "s".into() },
        path: "./".into(),
        depends_on: Vec::new(),
        object: json!({ "spec": spec }),
    };
    let none = GeneratedResources(Vec::new());
    let remote = with(json!({"components": ["https://github.com/x/y//c"]}));
    let err = kustomization_file(None, &none, &remote, &|_| true).err().unwrap_or_default();
    assert_eq!(err, "component path 'https://github.com/x/y//c' must be local and relative");
    let missing = with(json!({"components": ["gone", "here"], "ignoreMissingComponents": true}));
    let file = kustomization_file(None, &none, &missing, &|c| c == "here").unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(file.get("components"), Some(&json!(["here"])));
}

#[test]
fn output_file_names_are_kubernetes_names() {
    let name = |namespace: &str, name: &str| Name { namespace: namespace.into(), name: name.into() };
    assert_eq!(output_file_name(&name("flux-system", "apps.v1")), Ok("flux-system_apps.v1.yaml".to_string()));
    for (namespace, object) in
        [("../x", "a"), ("/tmp", "a"), ("a_b", "c"), ("a", "b_c"), ("A", "a"), ("a", ".."), ("a", "x/y"), ("", "a")]
    {
        assert!(output_file_name(&name(namespace, object)).is_err(), "{namespace}/{object}");
    }
}

#[test]
fn paths_are_resolved_against_the_source_root() {
    let base = vec!["apps".to_string(), "web".to_string()];
    assert_eq!(resolve(&base, "../../shared/cm.yaml"), Some(vec!["shared".to_string(), "cm.yaml".to_string()]));
    assert_eq!(resolve(&base, "../../../etc"), None);
    assert_eq!(resolve(&base, "/etc/passwd"), None);
    let kustomization = json!({
        "resources": ["a.yaml", "github.com/org/repo//x?ref=v1"],
        "patches": [{"path": "p.yaml"}, {"patch": "- op: add\n  path: /x\n"}],
        "configMapGenerator": [{"name": "c", "files": ["k=../f"], "envs": ["e.env"]}],
        "helmCharts": [{"name": "c", "valuesInline": {"path": "/var/log"}}],
    });
    let named: Vec<String> = named_paths(&kustomization).into_iter().map(|(_, path)| path).collect();
    assert_eq!(named, ["a.yaml", "github.com/org/repo//x?ref=v1", "p.yaml", "../f", "e.env"]);
}

#[test]
fn secret_values_leave_messages() {
    let secret =
        json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "aHVudGVyMg=="}, "stringData": {"s": "pw\nline2"}});
    let generator = json!({"secretGenerator": [{"name": "g", "literals": ["token=t0k3n"]}]});
    let mut values = secret_values(&secret);
    values.extend(secret_values(&generator));
    let message = "got hunter2, aHVudGVyMg==, pw and line2, t0k3n; e";
    assert_eq!(
        redact_message(message, &values),
        "got <redacted>, <redacted>, <redacted> and <redacted>, <redacted>; e"
    );
    assert_eq!(redact_message("every e", &["e".to_string()]), "<redacted>v<redacted>ry <redacted>");
}

fn sourced(name: &str, kind: &str, source: &str, depends_on: &[&str]) -> Item {
    let depends: Vec<Value> = depends_on.iter().map(|d| json!({"name": d})).collect();
    Item::from(json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": "flux-system"},
        "spec": {"sourceRef": {"kind": kind, "name": source}, "path": "./", "dependsOn": depends},
    }))
}

fn planned(items: &[Item], sources: &plan::Sources) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (found, _) = kustomizations(items);
    let (order, _) = build_order(&found, &|_| false);
    let result = plan::plan(&found, &order, sources, &[], false);
    let names = |indices: Vec<usize>| indices.into_iter().map(|i| found[i].id.name.clone()).collect();
    (
        names(result.builds.iter().map(|(i, _)| *i).collect()),
        names(result.deferred.clone()),
        result.missing_list(&found),
    )
}

/// An ExternalArtifact whose generator is not in the render waits for the other builds (one may
/// apply the generator), with what depends on it; a missing GitRepository stops the plan as
/// before; with nothing else to build, the ExternalArtifact is missing too.
#[test]
fn plans_wait_for_generators_a_build_may_apply() {
    let given = plan::Sources {
        given: vec![(SourcePattern::parse("core=.").map(|(p, _)| p).unwrap_or_else(|e| panic!("{e}")), ".".into())],
        checkout: None,
    };
    let items = [
        sourced("apps", "ExternalArtifact", "bundle", &[]),
        sourced("after", "GitRepository", "core", &["apps"]),
        sourced("platform", "GitRepository", "core", &[]),
        sourced("other", "GitRepository", "elsewhere", &[]),
    ];
    let (builds, deferred, missing) = planned(&items, &given);
    assert_eq!(builds, ["platform"]);
    assert_eq!(deferred, ["apps", "after"]);
    assert_eq!(missing, ["GitRepository/flux-system/elsewhere (Kustomization flux-system/other)"]);
    let alone = [sourced("apps", "ExternalArtifact", "bundle", &[])];
    let (builds, deferred, missing) = planned(&alone, &given);
    assert!(builds.is_empty() && deferred.is_empty());
    assert_eq!(missing, ["ExternalArtifact/flux-system/bundle (Kustomization flux-system/apps)"]);
}

/// The checkout is named (the info line) when a build reads it as the bootstrap source through
/// a chain of ExternalArtifacts, as well as directly.
#[test]
fn a_chain_of_generators_reading_the_checkout_uses_it() {
    let generator = |name: &str, artifact: &str, kind: &str, source: &str| {
        generator::Generator::read(&json!({
            "apiVersion": "source.extensions.fluxcd.io/v1beta1",
            "kind": "ArtifactGenerator",
            "metadata": {"name": name, "namespace": "flux-system"},
            "spec": {
                "sources": [{"alias": "src", "kind": kind, "name": source}],
                "artifacts": [{"name": artifact, "copy": [{"from": "@src/**", "to": "@artifact/"}]}],
            },
        }))
        .unwrap_or_else(|err| panic!("{err}"))
    };
    let generators = [
        generator("base-gen", "base", "GitRepository", "flux-system"),
        generator("top-gen", "top", "ExternalArtifact", "base"),
    ];
    let sources = plan::Sources { given: Vec::new(), checkout: Some("/checkout".into()) };
    let (found, _) = kustomizations(&[sourced("apps", "ExternalArtifact", "top", &[])]);
    let planned = plan::plan(&found, &[0], &sources, &generators, false);
    assert_eq!(planned.builds.len(), 1);
    assert!(planned.checkout_used);
}
