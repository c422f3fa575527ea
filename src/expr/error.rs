//! Errors are data: a message and the byte span it is about, rendered as expr renders them.

use std::fmt;

/// A byte range in the expression source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    pub(super) fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// 1-based line and column (in characters) of the start, as expr reports them.
    pub fn line_column(&self, source: &str) -> (usize, usize) {
        let before = source.get(..self.start).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExprError {
    pub message: String,
    pub span: Span,
    /// A value that exists only later (`terraform_output()` before terraform ran): the `${…}`
    /// holding it is kept as written, as Windsor keeps a deferred expression.
    pub deferred: bool,
}

impl ExprError {
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Self { message: message.into(), span, deferred: false }
    }

    /// `message (line:col)` followed by the offending line and a caret under the column.
    pub fn render(&self, source: &str) -> String {
        let (line, column) = self.span.line_column(source);
        let text = source.lines().nth(line - 1).unwrap_or("").replace('\t', " ");
        if text.is_empty() {
            return format!("{} ({line}:{column})", self.message);
        }
        // A long line is shown as a window around the column, so the caret stays readable.
        let chars: Vec<char> = text.chars().collect();
        let start = column.saturating_sub(1 + WINDOW);
        let end = chars.len().min(column + WINDOW);
        let mut shown: String = chars[start.min(end)..end].iter().collect();
        let mut caret = column - 1 - start;
        if start > 0 {
            shown.insert(0, '…');
            caret += 1;
        }
        if end < chars.len() {
            shown.push('…');
        }
        format!("{} ({line}:{column})\n | {shown}\n | {}^", self.message, ".".repeat(caret))
    }
}

/// Characters shown either side of an error's column.
const WINDOW: usize = 60;

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub(super) fn error(message: impl Into<String>, span: Span) -> ExprError {
    ExprError::new(message, span)
}

/// A regular expression that does not compile, in one line: the crate's message spans lines with
/// a caret under the pattern; its last line says what is wrong.
pub(super) fn regex_error(pattern: &str, err: &regex::Error) -> String {
    let text = err.to_string();
    let reason = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    format!("error parsing regexp {pattern:?}: {}", reason.trim().trim_start_matches("error: "))
}
