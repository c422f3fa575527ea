//! Sprig's `urlParse` and `urlJoin`, with Go's `net/url` rules for the parts they use:
//! scheme, opaque, user info, host, path (unescaped on parse, escaped on join), query (kept
//! raw) and fragment. Go's URL parser also validates hosts and ports and keeps a raw path
//! beside the decoded one; here a host is taken as written and an escaped path is rebuilt from
//! the decoded one.

use crate::template::go::{self, define, Arity::Exact, FuncMap, GoMap, GoValue};

pub fn register(funcs: &mut FuncMap) {
    define(funcs, "urlParse", Exact(1), |args| {
        let url = parse(args.string(0)?).map_err(|e| go::fail(args.name(), format!("unable to parse url: {e}")))?;
        let mut map = GoMap::new();
        for (key, value) in [
            ("scheme", url.scheme),
            ("host", url.host.clone()),
            ("hostname", hostname(&url.host)),
            ("path", url.path),
            ("query", url.query),
            ("opaque", url.opaque),
            ("fragment", url.fragment),
            ("userinfo", url.userinfo.unwrap_or_default()),
        ] {
            map.insert(key.into(), go::string(value));
        }
        Ok(go::map(map))
    });
    define(funcs, "urlJoin", Exact(1), |args| {
        let map = args.map(0)?;
        let field = |key: &str| -> Result<String, _> {
            match map.get(key) {
                None => Ok(String::new()),
                Some(GoValue::String(s)) => Ok(s.to_string()),
                Some(other) => Err(go::fail(
                    args.name(),
                    format!(
                        "unable to parse {key} key, must be of type string, but {} found",
                        crate::template::go::fmt::kind_of(other)
                    ),
                )),
            }
        };
        let userinfo = field("userinfo")?;
        let url = Url {
            scheme: field("scheme")?,
            host: field("host")?,
            path: field("path")?,
            query: field("query")?,
            opaque: field("opaque")?,
            fragment: field("fragment")?,
            userinfo: (!userinfo.is_empty()).then_some(userinfo),
        };
        Ok(go::string(url.to_string()))
    });
}

#[derive(Debug, Default, PartialEq)]
pub struct Url {
    scheme: String,
    opaque: String,
    userinfo: Option<String>,
    host: String,
    path: String,
    query: String,
    fragment: String,
}

/// Go's `url.Parse`, for the fields Sprig reads.
fn parse(raw: &str) -> Result<Url, String> {
    if raw.chars().any(|c| (c as u32) < 0x20 || c == '\u{7f}') {
        return Err(format!("parse {raw:?}: net/url: invalid control character in URL"));
    }
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = Url { fragment: unescape(fragment).map_err(|e| format!("parse {raw:?}: {e}"))?, ..Url::default() };
    if rest == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let mut rest = rest;
    let scheme_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')));
    if let Some(end) = scheme_end.filter(|&end| rest.as_bytes()[end] == b':') {
        if end == 0 {
            return Err(format!("parse {raw:?}: missing protocol scheme"));
        }
        if rest.as_bytes()[0].is_ascii_alphabetic() {
            url.scheme = rest[..end].to_ascii_lowercase();
            rest = &rest[end + 1..];
        }
    }
    if let Some((before, query)) = rest.split_once('?') {
        url.query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') && !url.scheme.is_empty() {
        url.opaque = rest.to_string();
        return Ok(url);
    }
    if rest.starts_with("//") && (!url.scheme.is_empty() || !rest.starts_with("///")) {
        let authority_end = rest[2..].find('/').map_or(rest.len(), |at| at + 2);
        let authority = &rest[2..authority_end];
        rest = &rest[authority_end..];
        match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                url.userinfo = Some(userinfo.to_string());
                url.host = host.to_string();
            }
            None => url.host = authority.to_string(),
        }
    }
    url.path = unescape(rest).map_err(|e| format!("parse {raw:?}: {e}"))?;
    Ok(url)
}

/// Go's `URL.Hostname`: the host without its port or IPv6 brackets.
fn hostname(host: &str) -> String {
    if let Some(inside) = host.strip_prefix('[') {
        return inside.split_once(']').map_or(inside, |(address, _)| address).to_string();
    }
    host.split_once(':').map_or(host, |(name, _)| name).to_string()
}

/// Percent-decoding; a bad escape is Go's error.
fn unescape(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                let bad: String = text[i..].chars().take(3).collect();
                return Err(format!("invalid URL escape {bad:?}"));
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Which part of a URL is being escaped (Go's `encodePath`, `encodeFragment`, query component).
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Path,
    Fragment,
    QueryComponent,
}

fn escape(text: &str, part: Part) -> String {
    let mut out = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'_' | b'.' | b'~')
            || match byte {
                b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match part {
                    Part::Path => byte != b'?',
                    Part::Fragment => true,
                    Part::QueryComponent => false,
                },
                b'!' | b'(' | b')' | b'*' => part == Part::Fragment,
                _ => false,
            };
        if keep {
            out.push(byte as char);
        } else if byte == b' ' && part == Part::QueryComponent {
            out.push('+');
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Go's `url.QueryEscape` (KOTS's `UrlEncode`): space as `+`, all but `A-Za-z0-9-_.~` escaped.
pub fn query_escape(text: &str) -> String {
    escape(text, Part::QueryComponent)
}

impl std::fmt::Display for Url {
    /// Go's `URL.String`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        if !self.opaque.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
            out.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() {
                out.push_str(&self.scheme);
                out.push(':');
            }
            if !self.scheme.is_empty() || !self.host.is_empty() || self.userinfo.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.userinfo.is_some() {
                    out.push_str("//");
                }
                if let Some(userinfo) = &self.userinfo {
                    out.push_str(userinfo);
                    out.push('@');
                }
                out.push_str(&self.host);
            }
            let path = escape(&self.path, Part::Path);
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            if out.is_empty() && path.split('/').next().is_some_and(|segment| segment.contains(':')) {
                out.push_str("./");
            }
            out.push_str(&path);
        }
        if !self.query.is_empty() {
            out.push('?');
            out.push_str(&self.query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            out.push_str(&escape(&self.fragment, Part::Fragment));
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{expect, expect_err};
    use super::query_escape;

    #[test]
    fn sprig_urls() {
        // url_test.go: TestUrlParse, TestUrlJoin.
        expect(&[
            (
                r#"{{ urlParse "proto://auth@host:80/path?query#fragment" | toJson }}"#,
                r#"{"fragment":"fragment","host":"host:80","hostname":"host","opaque":"","path":"/path","query":"query","scheme":"proto","userinfo":"auth"}"#,
            ),
            (
                r#"{{ urlJoin (dict "fragment" "fragment" "host" "host:80" "path" "/path" "query" "query" "scheme" "proto") }}"#,
                "proto://host:80/path?query#fragment",
            ),
            (
                r#"{{ urlJoin (dict "host" "host:80" "path" "/path" "query" "query" "scheme" "proto" "userinfo" "ASDJKJSD") }}"#,
                "proto://ASDJKJSD@host:80/path?query",
            ),
            (r#"{{ urlJoin (dict "fragment" "frag" "path" "p a/t h") }}"#, "p%20a/t%20h#frag"),
            (
                r#"{{ urlParse "mailto:joe@example.com" | toJson }}"#,
                r#"{"fragment":"","host":"","hostname":"","opaque":"joe@example.com","path":"","query":"","scheme":"mailto","userinfo":""}"#,
            ),
            (
                r#"{{ (urlParse "http://[::1]:8080/a%20b").hostname }} {{ (urlParse "http://[::1]:8080/a%20b").path }}"#,
                "::1 /a b",
            ),
        ]);
        expect_err(&[
            (r#"{{ urlParse "://x" }}"#, "unable to parse url: parse \"://x\": missing protocol scheme"),
            (r#"{{ urlJoin (dict "host" 1) }}"#, "unable to parse host key, must be of type string, but int found"),
        ]);
        assert_eq!(query_escape("?some url unsafe=%value"), "%3Fsome+url+unsafe%3D%25value");
    }
}
