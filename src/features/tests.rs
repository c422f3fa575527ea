use super::merge::{merge_kustomization, merge_terraform};
use super::model::{BlueprintPatch, Kustomization, Strategy, TerraformComponent};
use super::step::letters_too_far;
use crate::doc::Value;
use serde_json::json;

#[test]
fn terraform_merge_and_replace() {
    let base = TerraformComponent {
        path: "network/vpc".into(),
        source: Some("core".into()),
        inputs: json!({"cidr": "10.0.0.0/16", "tags": {"a": 1}}).as_object().cloned().unwrap_or_default(),
        depends_on: vec!["x".into()],
        ..Default::default()
    };
    let mut list = vec![base.clone()];
    let overlay = TerraformComponent {
        path: "network/vpc".into(),
        source: Some("core".into()),
        inputs: json!({"tags": {"b": 2}, "nat": true}).as_object().cloned().unwrap_or_default(),
        depends_on: vec!["x".into(), "y".into()],
        parallelism: Some(4),
        ..Default::default()
    };
    assert_eq!(merge_terraform(&mut list, overlay), "merged");
    assert_eq!(
        Value::Object(list[0].inputs.clone()),
        json!({"cidr": "10.0.0.0/16", "tags": {"a": 1, "b": 2}, "nat": true})
    );
    assert_eq!(list[0].depends_on, vec!["x", "y"]);
    assert_eq!(list[0].parallelism, Some(4));
    let other_source = TerraformComponent { path: "network/vpc".into(), ..Default::default() };
    assert_eq!(merge_terraform(&mut list, other_source), "appended");
    let replace = TerraformComponent {
        path: "network/vpc".into(),
        source: Some("core".into()),
        strategy: Strategy::Replace,
        ..Default::default()
    };
    assert_eq!(merge_terraform(&mut list, replace), "replaced");
    assert!(list[0].inputs.is_empty() && list[0].depends_on.is_empty() && list[0].strategy == Strategy::Merge);
}

#[test]
fn kustomization_merge_unions_and_overwrites() {
    let mut list = vec![Kustomization {
        name: "ingress".into(),
        path: "ingress/base".into(),
        components: vec!["nginx".into()],
        substitutions: json!({"a": "1", "b": "2"}).as_object().cloned().unwrap_or_default(),
        ..Default::default()
    }];
    let overlay = Kustomization {
        name: "ingress".into(),
        components: vec!["nginx".into(), "nginx/nodeport".into()],
        substitutions: json!({"b": "3"}).as_object().cloned().unwrap_or_default(),
        patches: vec![BlueprintPatch { patch: Some("p".into()), ..Default::default() }],
        ..Default::default()
    };
    assert_eq!(merge_kustomization(&mut list, overlay), "merged");
    assert_eq!(list[0].components, vec!["nginx", "nginx/nodeport"]);
    let more = Kustomization { name: "ingress".into(), components: vec!["b".into(), "a".into()], ..Default::default() };
    merge_kustomization(&mut list, more);
    assert_eq!(list[0].components, vec!["a", "b", "nginx", "nginx/nodeport"]);
    assert_eq!(list[0].path, "ingress/base");
    assert_eq!(Value::Object(list[0].substitutions.clone()), json!({"a": "1", "b": "3"}));
    assert_eq!(list[0].patches.len(), 1);
}

/// The letter-count bound never rules out a name within the allowed distance.
#[test]
fn letter_counts_bound_the_edit_distance() {
    let names = [
        "observability.enabled",
        "observabilty.enabled",
        "flags.f12",
        "cfg_0001",
        "cluster.name",
        "clsuter.name",
        "dns.domain",
        "dns.domian",
        "a",
        "ab",
        "ba",
        "",
        "provider",
        "platform",
        "plaform",
        "ünicode",
        "unicode",
    ];
    for a in names {
        for b in names {
            for allowed in 0..6 {
                if letters_too_far(a, b, allowed) {
                    assert!(strsim::levenshtein(a, b) > allowed, "{a} {b} {allowed}");
                }
            }
        }
    }
    assert!(letters_too_far("flags.f12", "cfg_0001", 2));
    assert!(!letters_too_far("clsuter.name", "cluster.name", 2));
}
