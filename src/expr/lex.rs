//! Tokens of the expression language, each with its byte span in the source.

use super::error::{ExprError, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    Int(i64),
    Float(f64),
    Str(String),
    Ident(String),
    /// Operators and punctuation, including the word operators (`and`, `in`, `matches`, …).
    Op(&'static str),
    /// `#`, `#acc`, `#index`: the element, accumulator or index inside a predicate's closure.
    Pointer(String),
    Eof,
}

/// Longest first where one is a prefix of another (`==` before `=`).
const OPERATORS: [&str; 29] = [
    "?.", "??", "==", "!=", "<=", ">=", "&&", "||", "**", "..", "(", ")", "[", "]", "{", "}", ",", ":", ".", "?", "<",
    ">", "!", "+", "-", "*", "/", ";", "=",
];
const SINGLE: [&str; 2] = ["%", "^"];
const WORDS: [&str; 10] = ["and", "or", "not", "in", "matches", "contains", "startsWith", "endsWith", "nil", "let"];

pub fn lex(source: &str) -> Result<Vec<(Token, Span)>, ExprError> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if source[i..].starts_with("//") {
            i = source[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        }
        if source[i..].starts_with("/*") {
            i = source[i + 2..].find("*/").map_or(bytes.len(), |n| i + n + 4);
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (token, end) = number(source, start)?;
            tokens.push((token, Span::new(start, end)));
            i = end;
        } else if c == b'#' {
            let mut end = i + 1;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            tokens.push((Token::Pointer(source[start + 1..end].to_string()), Span::new(start, end)));
            i = end;
        } else if c == b'"' || c == b'\'' {
            let (text, end) = string(source, start)?;
            tokens.push((Token::Str(text), Span::new(start, end)));
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let mut end = i + 1;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b'$')
            {
                end += 1;
            }
            let word = &source[start..end];
            let token = match WORDS.iter().find(|w| **w == word) {
                Some(w) => Token::Op(w),
                None => Token::Ident(word.to_string()),
            };
            tokens.push((token, Span::new(start, end)));
            i = end;
        } else if let Some(op) = OPERATORS.iter().chain(SINGLE.iter()).find(|op| source[i..].starts_with(**op)) {
            // `?.` followed by a digit is `? .5` (a ternary), as in expr.
            let op = if *op == "?." && bytes.get(i + 2).is_some_and(u8::is_ascii_digit) { "?" } else { op };
            tokens.push((Token::Op(op), Span::new(start, start + op.len())));
            i += op.len();
        } else {
            let ch = source[i..].chars().next().unwrap_or('?');
            return Err(ExprError::new(
                format!("unexpected character {ch:?}"),
                Span::new(start, start + ch.len_utf8()),
            ));
        }
    }
    tokens.push((Token::Eof, Span::new(source.len(), source.len())));
    Ok(tokens)
}

fn number(source: &str, start: usize) -> Result<(Token, usize), ExprError> {
    let bytes = source.as_bytes();
    let mut end = start;
    if source[start..].starts_with("0x") || source[start..].starts_with("0X") {
        end += 2;
        while end < bytes.len() && (bytes[end].is_ascii_hexdigit() || bytes[end] == b'_') {
            end += 1;
        }
        let digits = source[start + 2..end].replace('_', "");
        return i64::from_str_radix(&digits, 16)
            .map(|n| (Token::Int(n), end))
            .map_err(|_| ExprError::new("invalid hexadecimal number", Span::new(start, end)));
    }
    let mut is_float = false;
    while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'_') {
        end += 1;
    }
    // A dot starts a fraction only when a digit follows: `1..3` is a range, `a.0` never lexes here.
    if end < bytes.len() && bytes[end] == b'.' && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        is_float = true;
        end += 1;
        while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'_') {
            end += 1;
        }
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut exp = end + 1;
        if exp < bytes.len() && (bytes[exp] == b'+' || bytes[exp] == b'-') {
            exp += 1;
        }
        if exp < bytes.len() && bytes[exp].is_ascii_digit() {
            is_float = true;
            end = exp;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    let text = source[start..end].replace('_', "");
    let span = Span::new(start, end);
    if is_float {
        text.parse().map(|f| (Token::Float(f), end)).map_err(|_| ExprError::new("invalid number", span))
    } else {
        match text.parse::<i64>() {
            Ok(n) => Ok((Token::Int(n), end)),
            Err(_) => Err(ExprError::new("integer literal out of range", span)),
        }
    }
}

fn string(source: &str, start: usize) -> Result<(String, usize), ExprError> {
    let quote = source.as_bytes()[start] as char;
    let mut out = String::new();
    let mut chars = source[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        let at = start + 1 + offset;
        match c {
            c if c == quote => return Ok((out, at + 1)),
            '\\' => {
                let Some((_, escaped)) = chars.next() else { break };
                out.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    '\\' => '\\',
                    '\'' => '\'',
                    '"' => '"',
                    '`' => '`',
                    'u' => {
                        let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| ExprError::new("invalid \\u escape in string", Span::new(at, at + 6)))?
                    }
                    other => {
                        return Err(ExprError::new(
                            format!("invalid escape \\{other} in string"),
                            Span::new(at, at + 2),
                        ))
                    }
                });
            }
            c => out.push(c),
        }
    }
    Err(ExprError::new("literal not terminated", Span::new(start, source.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<Token> {
        lex(source).map(|t| t.into_iter().map(|(t, _)| t).collect()).unwrap_or_default()
    }

    #[test]
    fn lexes_operators_words_and_literals() {
        assert_eq!(
            kinds("a?.b ?? 'x' and 1.5e2 != 0x1F"),
            vec![
                Token::Ident("a".into()),
                Token::Op("?."),
                Token::Ident("b".into()),
                Token::Op("??"),
                Token::Str("x".into()),
                Token::Op("and"),
                Token::Float(150.0),
                Token::Op("!="),
                Token::Int(31),
                Token::Eof
            ]
        );
    }

    #[test]
    fn strings_take_escapes_and_either_quote() {
        assert_eq!(
            kinds(r#""a\"b" 'c\'d\n'"#),
            vec![Token::Str("a\"b".into()), Token::Str("c'd\n".into()), Token::Eof]
        );
    }

    #[test]
    fn errors_point_at_the_character() {
        let err = lex("a @ b").err();
        assert_eq!(err.map(|e| e.span), Some(Span::new(2, 3)));
        // `#` is a predicate's pointer; outside one the parser refuses it.
        assert!(kinds("#acc + #").contains(&Token::Pointer("acc".into())));
    }
}
