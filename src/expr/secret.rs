//! Windsor's secret references (windsorcli/cli v0.9.0, pkg/runtime/secrets/secrets.go). A
//! `${…}` whose whole expression is a secret notation (`secret.op.<vault>.<item>.<field>`,
//! `secrets.…`, `op.<vault>.<item>.<field>`, `sops.<key.path>`, `secret.sops.<key.path>`) is
//! Windsor's `secret(vault, item, field)` call (`NormalizeExpression`), and that call is deferred
//! while a blueprint is composed: the `${…}` is kept as written, for Windsor to resolve when it
//! applies. Secrets are never read here.

/// The `secret(…)` call a secret notation stands for (`NormalizeExpression`), `None` for any other
/// expression (an explicit `secret(…)` call included: it is a call already).
pub fn notation(expression: &str) -> Option<String> {
    let trimmed = expression.trim();
    if trimmed.starts_with("secret(") {
        return None;
    }
    let prefixed = trimmed.strip_prefix("secret.").or_else(|| trimmed.strip_prefix("secrets."));
    if let Some(path) = prefixed.filter(|p| !p.trim().is_empty()) {
        let parts = keys(path);
        if !parts.is_empty() && parts.iter().all(|p| !p.trim().is_empty()) {
            if let Some(call) = rewrite(&parts) {
                return Some(call);
            }
        }
    }
    for provider in ["op", "sops"] {
        let bare = trimmed.strip_prefix(provider).is_some_and(|rest| rest.starts_with(['.', '[']));
        if bare {
            let parts = keys(trimmed);
            if parts.first().is_some_and(|p| p.eq_ignore_ascii_case(provider)) {
                return rewrite(&parts);
            }
        }
    }
    None
}

/// `rewriteNotationParts`: `op` takes exactly vault, item and field; `sops` a key path.
fn rewrite(parts: &[String]) -> Option<String> {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    match parts.first()?.to_ascii_lowercase().as_str() {
        "op" if parts.len() == 4 => {
            Some(format!("secret({}, {}, {})", quote(&parts[1]), quote(&parts[2]), quote(&parts[3])))
        }
        "sops" if parts.len() >= 2 => Some(format!("secret(\"sops\", {}, \"\")", quote(&parts[1..].join(".")))),
        _ => None,
    }
}

/// Windsor's `parseKeys`: a path of dot and bracket segments (`vault["my item"].field`); quotes
/// only count inside brackets, and a backslash there escapes the next character.
fn keys(path: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut in_quotes = false;
    let mut just_closed = false;
    let mut chars = path.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '[' if !in_quotes => {
                if depth == 0 {
                    if !current.is_empty() {
                        keys.push(std::mem::take(&mut current));
                    }
                    just_closed = false;
                } else {
                    current.push(c);
                }
                depth += 1;
            }
            ']' if !in_quotes => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    keys.push(std::mem::take(&mut current));
                    just_closed = true;
                } else {
                    current.push(c);
                }
            }
            '.' if depth == 0 && !in_quotes => {
                if !current.is_empty() {
                    keys.push(std::mem::take(&mut current));
                } else if !just_closed {
                    keys.push(String::new());
                }
                just_closed = false;
            }
            '"' | '\'' => {
                if depth > 0 {
                    in_quotes = !in_quotes;
                }
                just_closed = false;
            }
            '\\' if depth > 0 && in_quotes => {
                if let Some(next) = chars.next() {
                    current.push(next);
                } else {
                    current.push(c);
                }
                just_closed = false;
            }
            _ => {
                current.push(c);
                just_closed = false;
            }
        }
    }
    if !current.is_empty() || !just_closed {
        keys.push(current);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::notation;

    /// windsorcli/cli v0.9.0 pkg/runtime/secrets/secrets_test.go `TestNormalizeExpression`.
    #[test]
    fn notations_as_windsor_rewrites_them() {
        let cases = [
            ("secret.op.myvault.myitem.myfield", Some(r#"secret("myvault", "myitem", "myfield")"#)),
            ("secrets.op.myvault.myitem.myfield", Some(r#"secret("myvault", "myitem", "myfield")"#)),
            ("secret.sops.database.password", Some(r#"secret("sops", "database.password", "")"#)),
            ("secrets.sops.nested.key.path", Some(r#"secret("sops", "nested.key.path", "")"#)),
            ("op.myvault.myitem.myfield", Some(r#"secret("myvault", "myitem", "myfield")"#)),
            ("sops.database.password", Some(r#"secret("sops", "database.password", "")"#)),
            (r#"secret.op.vault["item"].field"#, Some(r#"secret("vault", "item", "field")"#)),
            (r#"secret("v", "i", "f")"#, None),
            ("SOME_ENV_VAR", None),
            ("", None),
            ("secret.op.vault.item", None),
            ("secret.sops", None),
            // Not notations: other paths that merely start alike.
            ("operator.name", None),
            ("sopsy.key", None),
            ("op.vault.item", None),
        ];
        for (input, want) in cases {
            assert_eq!(notation(input).as_deref(), want, "{input}");
        }
    }
}
