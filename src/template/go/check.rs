//! What Go's parser checks and the gotmpl crate leaves to execution: every function a template
//! names is defined, and every variable is declared before it is used, in scope. Go refuses
//! such a template whole, even where the name sits in a branch that never runs
//! (`{{ or 1 (undefined) }}`); the crate would print the branches that do run.

use gotmpl::parse::{Expr, ListNode, Node, PipeNode};
use gotmpl::TemplateError;

/// Checks a parsed template and its definitions; `defined` says whether a function exists (Go's
/// builtins among them).
pub fn check(tree: &ListNode, defines: &[&ListNode], defined: &dyn Fn(&str) -> bool) -> Result<(), TemplateError> {
    let checker = Checker { defined };
    checker.list(tree, &mut vec!["$".to_string()])?;
    for body in defines {
        checker.list(body, &mut vec!["$".to_string()])?;
    }
    Ok(())
}

struct Checker<'a> {
    defined: &'a dyn Fn(&str) -> bool,
}

impl Checker<'_> {
    fn list(&self, list: &ListNode, vars: &mut Vec<String>) -> Result<(), TemplateError> {
        for node in &list.nodes {
            match node {
                Node::List(inner) => self.list(inner, vars)?,
                Node::Action(action) => self.pipe(&action.pipe, vars)?,
                Node::If(branch) | Node::With(branch) | Node::Range(branch) => {
                    // Variables declared in a control structure end at its `end`.
                    let mark = vars.len();
                    self.pipe(&branch.pipe, vars)?;
                    self.list(&branch.body, vars)?;
                    if let Some(other) = &branch.else_body {
                        self.list(other, vars)?;
                    }
                    vars.truncate(mark);
                }
                Node::Template(call) => {
                    if let Some(pipe) = &call.pipe {
                        self.pipe(pipe, vars)?;
                    }
                }
                Node::Define(define) => self.list(&define.body, &mut vec!["$".to_string()])?,
                Node::Text(_) | Node::Break(_) | Node::Continue(_) => {}
            }
        }
        Ok(())
    }

    fn pipe(&self, pipe: &PipeNode, vars: &mut Vec<String>) -> Result<(), TemplateError> {
        for command in &pipe.commands {
            for arg in &command.args {
                self.expr(arg, vars)?;
            }
        }
        for name in &pipe.decl {
            if pipe.is_assign {
                self.variable(name, vars)?;
            } else {
                vars.push(name.to_string());
            }
        }
        Ok(())
    }

    fn variable(&self, name: &str, vars: &[String]) -> Result<(), TemplateError> {
        if vars.iter().any(|v| v == name) {
            Ok(())
        } else {
            Err(TemplateError::UndefinedVariable(name.to_string()))
        }
    }

    fn expr(&self, expr: &Expr, vars: &mut Vec<String>) -> Result<(), TemplateError> {
        match expr {
            Expr::Variable(_, name, _) => self.variable(name, vars),
            Expr::Identifier(_, name) => {
                if (self.defined)(name) {
                    Ok(())
                } else {
                    Err(TemplateError::UndefinedFunction(name.to_string()))
                }
            }
            Expr::Pipe(_, pipe) => self.pipe(pipe, vars),
            Expr::Chain(_, inner, _) => self.expr(inner, vars),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str) -> Result<(), String> {
        let (tree, defines) = gotmpl::parse::Parser::with_name(None, source, "{{", "}}")
            .and_then(gotmpl::parse::Parser::parse)
            .map_err(|e| e.to_string())?;
        let bodies: Vec<&ListNode> = defines.iter().map(|d| &d.body).collect();
        let builtins = crate::template::go::builtins::builtins();
        check(&tree, &bodies, &|name| name == "known" || name == "or" || builtins.contains_key(name))
            .map_err(|e| e.to_string())
    }

    /// As Go 1.19's parser: these parse, those do not.
    #[test]
    fn names_are_checked_as_go_parses() {
        for ok in [
            "{{ $x := 1 }}{{ $x }}",
            "{{ if true }}{{ $x := 1 }}{{ else }}{{ $x }}{{ end }}",
            "{{ range $i, $v := known }}{{ $i }}{{ $v }}{{ end }}",
            "{{ with $x := 1 }}{{ $x }}{{ end }}",
            "{{ known | printf \"%v\" }}{{ $ }}",
            "{{ $x := 1 }}{{ $x = 2 }}",
        ] {
            assert_eq!(run(ok), Ok(()), "{ok}");
        }
        for (bad, expected) in [
            ("{{ if true }}{{ $x := 1 }}{{ end }}{{ $x }}", "$x"),
            ("{{ or 1 (unknown) }}", "unknown"),
            ("{{ $y = 2 }}", "$y"),
            ("{{ define \"d\" }}{{ $x }}{{ end }}{{ $x := 1 }}", "$x"),
        ] {
            let err = run(bad).err().unwrap_or_default();
            assert!(err.contains(expected), "{bad}: {err}");
        }
    }
}
