//! The parse-and-emit floor of `scripts/bench`: what passing YAML through costs with nothing but
//! the parser the function uses (granit-parser) and a style-keeping emitter. It reads one file,
//! walks its events once and writes the documents back: block collections are laid out again (two
//! spaces, sequences not indented under their key, as the function writes), while every scalar and
//! every flow collection is copied as it was written, re-indented when it spans lines. No tree,
//! no values: the lower bound a passthrough can reach with this parser.
//!
//! Not part of the function; a measuring stick. Comments, anchors and tags are not kept (the
//! parser reports comments only with a feature the function does not use).
//!
//! Usage: `yaml_floor FILE` (writes to stdout). Built by `cargo bench --no-run --bench yaml_floor`.

use granit_parser::{Event, Parser, ScalarStyle, Span, StructureStyle};
use std::io::Write;

enum Frame {
    Mapping { indent: usize, key_next: bool, inline_first: bool },
    Sequence { indent: usize },
}

struct Emitter<'a> {
    source: &'a str,
    out: Vec<u8>,
    stack: Vec<Frame>,
    documents: usize,
    /// Depth of a flow collection being skipped, and where it started.
    flow: Option<(usize, usize)>,
}

impl<'a> Emitter<'a> {
    /// Text of a node with its continuation lines moved so the least indented one sits at `indent`.
    fn write_node_text(&mut self, text: &str, indent: usize) {
        let mut lines = text.split('\n');
        self.out.extend_from_slice(lines.next().unwrap_or_default().as_bytes());
        let rest: Vec<&str> = lines.collect();
        if rest.is_empty() {
            return;
        }
        let least = rest
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start_matches(' ').len())
            .min()
            .unwrap_or(0);
        for line in rest {
            self.out.push(b'\n');
            if line.trim().is_empty() {
                continue;
            }
            self.out.extend(std::iter::repeat_n(b' ', indent));
            self.out.extend_from_slice(&line.as_bytes()[least..]);
        }
    }

    /// Before a node: the key's colon, or the sequence dash.
    fn before_node(&mut self, block_collection: bool) -> usize {
        match self.stack.last_mut() {
            None => 0,
            Some(Frame::Sequence { indent }) => {
                let indent = *indent;
                self.out.extend(std::iter::repeat_n(b' ', indent));
                self.out.extend_from_slice(b"- ");
                indent + 2
            }
            Some(Frame::Mapping { indent, key_next, inline_first }) => {
                let indent = *indent;
                if *key_next {
                    if !std::mem::take(inline_first) {
                        self.out.extend(std::iter::repeat_n(b' ', indent));
                    }
                    *key_next = false;
                    indent
                } else {
                    *key_next = true;
                    if block_collection {
                        self.out.push(b':');
                        self.out.push(b'\n');
                    } else {
                        self.out.extend_from_slice(b": ");
                    }
                    indent + 2
                }
            }
        }
    }

    fn is_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Mapping { key_next: true, .. }))
    }

    fn event(&mut self, event: Event<'_>, span: Span) {
        let range = span.byte_range().unwrap_or(0..0);
        if let Some((depth, start)) = self.flow {
            match event {
                Event::MappingStart(..) | Event::SequenceStart(..) => self.flow = Some((depth + 1, start)),
                Event::MappingEnd | Event::SequenceEnd if depth == 1 => {
                    self.flow = None;
                    let text = self.source.get(start..range.end).unwrap_or_default();
                    let indent = self.child_indent();
                    self.write_node_text(text, indent);
                    self.after_leaf();
                }
                Event::MappingEnd | Event::SequenceEnd => self.flow = Some((depth - 1, start)),
                _ => {}
            }
            return;
        }
        match event {
            Event::DocumentStart(..) => {
                if self.documents > 0 {
                    self.out.extend_from_slice(b"---\n");
                }
                self.documents += 1;
            }
            Event::Scalar(..) | Event::Alias(..) => {
                let block = matches!(event, Event::Scalar(_, ScalarStyle::Literal | ScalarStyle::Folded, ..));
                let key = self.is_key();
                let indent = self.before_node(false);
                if block {
                    // The span holds the content lines; the indicator (`|-`, `>+2`…) ends the line before.
                    let before = self.source.get(..range.start).unwrap_or_default().trim_end_matches(' ');
                    let before = before.strip_suffix('\n').unwrap_or(before);
                    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
                    let header = line.rfind(['|', '>']).map_or("|", |at| line[at..].trim_end());
                    self.out.extend_from_slice(header.as_bytes());
                    self.out.push(b'\n');
                    self.out.extend(std::iter::repeat_n(b' ', indent));
                }
                let text = self.source.get(range).unwrap_or_default();
                self.write_node_text(text.strip_suffix('\n').unwrap_or(text), indent);
                if !key {
                    self.after_leaf();
                }
            }
            Event::MappingStart(StructureStyle::Flow, ..) | Event::SequenceStart(StructureStyle::Flow, ..) => {
                self.before_node(false);
                self.flow = Some((1, range.start));
            }
            Event::MappingStart(..) => {
                let in_sequence = matches!(self.stack.last(), Some(Frame::Sequence { .. }));
                let indent = self.before_node(true);
                self.stack.push(Frame::Mapping { indent, key_next: true, inline_first: in_sequence });
            }
            Event::SequenceStart(..) => {
                // Sequences under a key are not indented; nested in a sequence they are.
                let under_key = matches!(self.stack.last(), Some(Frame::Mapping { .. }));
                let indent = self.before_node(true);
                let indent = if under_key { indent - 2 } else { indent };
                if !under_key && !self.stack.is_empty() {
                    self.out.push(b'\n');
                }
                self.stack.push(Frame::Sequence { indent });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }

    fn child_indent(&self) -> usize {
        match self.stack.last() {
            Some(Frame::Mapping { indent, .. }) => indent + 2,
            Some(Frame::Sequence { indent }) => indent + 2,
            None => 0,
        }
    }

    fn after_leaf(&mut self) {
        self.out.push(b'\n');
    }
}

fn main() {
    // `cargo test --all-targets` and `cargo bench` run it without a file: nothing to measure.
    let Some(path) = std::env::args().nth(1).filter(|arg| !arg.starts_with("--")) else {
        eprintln!("yaml_floor: no file given, nothing measured (scripts/bench runs it as `yaml_floor FILE`)");
        return;
    };
    let source = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("{path}: {err}");
            std::process::exit(2);
        }
    };
    let mut emitter =
        Emitter { source: &source, out: Vec::with_capacity(source.len()), stack: Vec::new(), documents: 0, flow: None };
    for event in Parser::new_from_str(&source) {
        match event {
            Ok((event, span)) => emitter.event(event, span),
            Err(err) => {
                eprintln!("{path}: {err}");
                std::process::exit(1);
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(&emitter.out).and_then(|_| stdout.flush()).is_err() {
        std::process::exit(1);
    }
}
