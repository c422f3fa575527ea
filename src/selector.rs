//! Kubernetes label and annotation selectors (the grammar of apimachinery `labels.Parse`):
//! comma-separated requirements `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`,
//! `key notin (a,b)`, `key>n`, `key<n`. Written here: no maintained crate implements it.
//! `!=` and `notin` also match objects without the key, as in Kubernetes.

use crate::doc::Map;

#[derive(Clone, Debug, PartialEq)]
enum Requirement {
    Exists(String),
    NotExists(String),
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// A parsed selector; the empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selector(Vec<Requirement>);

impl Selector {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parser = Parser { chars: text.chars().collect(), pos: 0, text };
        let mut requirements = Vec::new();
        parser.skip_spaces();
        if parser.at_end() {
            return Ok(Self(requirements));
        }
        loop {
            requirements.push(parser.requirement()?);
            parser.skip_spaces();
            if parser.at_end() {
                return Ok(Self(requirements));
            }
            parser.expect(',')?;
        }
    }

    /// Whether a label (or annotation) map satisfies every requirement.
    pub fn matches(&self, labels: Option<&Map>) -> bool {
        let get = |key: &str| labels.and_then(|l| l.get(key)).and_then(|v| v.as_str());
        self.0.iter().all(|requirement| match requirement {
            Requirement::Exists(key) => get(key).is_some(),
            Requirement::NotExists(key) => get(key).is_none(),
            Requirement::Equals(key, value) => get(key) == Some(value.as_str()),
            Requirement::NotEquals(key, value) => get(key) != Some(value.as_str()),
            Requirement::In(key, values) => get(key).is_some_and(|v| values.iter().any(|x| x == v)),
            Requirement::NotIn(key, values) => get(key).is_none_or(|v| !values.iter().any(|x| x == v)),
            Requirement::GreaterThan(key, n) => get(key).and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v > *n),
            Requirement::LessThan(key, n) => get(key).and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v < *n),
        })
    }
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        format!("invalid selector {:?} at position {}: {what}", self.text, self.pos + 1)
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        self.skip_spaces();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{c}'")))
        }
    }

    /// A key or value: letters, digits, `-`, `_`, `.`, `/` (keys may carry a DNS prefix).
    fn word(&mut self) -> String {
        self.skip_spaces();
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn key(&mut self) -> Result<String, String> {
        let key = self.word();
        if key.is_empty() {
            return Err(self.error("expected a key"));
        }
        let name = key.rsplit('/').next().unwrap_or_default();
        if name.is_empty() || key.matches('/').count() > 1 {
            return Err(self.error(&format!("invalid key {key:?}")));
        }
        Ok(key)
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        self.skip_spaces();
        if self.peek() == Some('!') {
            self.pos += 1;
            return Ok(Requirement::NotExists(self.key()?));
        }
        let key = self.key()?;
        self.skip_spaces();
        let rest: String = self.chars[self.pos..].iter().collect();
        let operator = ["==", "!=", "=", ">", "<"].into_iter().find(|op| rest.starts_with(op));
        if let Some(op) = operator {
            self.pos += op.len();
            let value = self.word();
            self.skip_spaces();
            if let Some(c) = self.peek().filter(|c| *c != ',') {
                return Err(self.error(&format!(
                    "unexpected {c:?} after {key}{op}{value}: a value holds letters, digits, '-', '_' and '.', \
                     and requirements are separated by ','"
                )));
            }
            return Ok(match op {
                "!=" => Requirement::NotEquals(key, value),
                ">" | "<" => {
                    let n = value.parse().map_err(|_| self.error(&format!("{op} needs an integer, got {value:?}")))?;
                    if op == ">" {
                        Requirement::GreaterThan(key, n)
                    } else {
                        Requirement::LessThan(key, n)
                    }
                }
                _ => Requirement::Equals(key, value),
            });
        }
        let word_start = self.pos;
        match self.word().as_str() {
            "in" | "notin" => {
                let negated = self.chars[word_start..].starts_with(&['n']);
                let op = if negated { "notin" } else { "in" };
                self.expect('(')
                    .map_err(|_| self.error(&format!("{op} takes values in parentheses, e.g. {key} {op} (a,b)")))?;
                let mut values = Vec::new();
                loop {
                    values.push(self.word());
                    self.skip_spaces();
                    match self.peek() {
                        Some(',') => self.pos += 1,
                        Some(')') => {
                            self.pos += 1;
                            break;
                        }
                        _ => return Err(self.error("expected ',' or ')' in a value set")),
                    }
                }
                Ok(if negated { Requirement::NotIn(key, values) } else { Requirement::In(key, values) })
            }
            "" => {
                self.skip_spaces();
                match self.peek().filter(|c| *c != ',') {
                    Some(c) => Err(self.error(&format!(
                        "unexpected {c:?} after {key:?}: expected =, ==, !=, in, notin, > or <, \
                         or ',' before the next requirement"
                    ))),
                    None => Ok(Requirement::Exists(key)),
                }
            }
            other => Err(self.error(&format!("unexpected {other:?}: expected =, ==, !=, in, notin, > or <"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matches(selector: &str, labels: serde_json::Value) -> bool {
        let selector = Selector::parse(selector).unwrap_or_else(|e| panic!("{e}"));
        selector.matches(labels.as_object())
    }

    #[test]
    fn the_kubernetes_grammar() {
        let labels = json!({"app": "web", "tier": "frontend", "app.kubernetes.io/part-of": "shop", "n": "5"});
        assert!(matches("app=web", labels.clone()));
        assert!(matches("app==web,tier=frontend", labels.clone()));
        assert!(matches("app != db", labels.clone()));
        assert!(matches("missing != x", labels.clone()));
        assert!(matches("tier in (frontend, backend)", labels.clone()));
        assert!(!matches("tier notin (frontend)", labels.clone()));
        assert!(matches("missing notin (a)", labels.clone()));
        assert!(matches("app.kubernetes.io/part-of", labels.clone()));
        assert!(matches("!missing", labels.clone()));
        assert!(!matches("!app", labels.clone()));
        assert!(matches("n>4,n<6", labels.clone()));
        assert!(matches("", labels.clone()));
        assert!(!matches("app=db", labels));
        assert!(!matches("app", json!(null)));
    }

    #[test]
    fn errors_say_where() {
        for bad in ["app=web,", "tier in (a", "=x", "app ~ x", "n>x", "a/b/c=1", "app===web", "app in a", "a=b c=d"] {
            let err = Selector::parse(bad).err().unwrap_or_default();
            assert!(err.starts_with(&format!("invalid selector {bad:?} at position ")), "{bad}: {err}");
        }
        let err = Selector::parse("app in web").err().unwrap_or_default();
        assert!(err.ends_with("in takes values in parentheses, e.g. app in (a,b)"), "{err}");
        let err = Selector::parse("team ~= x").err().unwrap_or_default();
        assert!(err.contains("unexpected '~' after \"team\""), "{err}");
    }
}
