//! The static side of bounding a program: what is refused before compiling, and the rewrite
//! that routes a program's work through the meter (see the parent module for why).

use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Def, Pattern, Term};
use jaq_core::ops::Math;
use jaq_core::path::{Part, Path};

use super::{MAX_PROGRAM_BYTES, MAX_PROGRAM_NESTING, Position, ProjectionError};

/// The native that meters every output of a compound term.
pub(super) const TICK: &str = "__otc_tick";
/// The native that meters every output of a path or `..`: one unit, as they only pick parts of
/// values already metered (or of the result itself).
pub(super) const STEP: &str = "__otc_step";
/// The native that `*` is rewritten to.
pub(super) const MUL: &str = "__otc_mul";
/// The variable `l *= r` binds `r` to.
const MUL_VAR: &str = "$__otc_mul";
/// What names of the program may not start with.
const RESERVED: &str = "__otc";

/// A refusal, at a slice of the program.
#[derive(Debug)]
pub(super) struct Refusal<'s> {
    pub(super) at: &'s str,
    pub(super) reason: String,
}

/// Refuses programs that are too long, or nested too deep for a recursive parser.
pub(super) fn size(program: &str) -> Result<(), ProjectionError> {
    if program.len() > MAX_PROGRAM_BYTES {
        return Err(ProjectionError::Refused {
            at: Position::of(program, MAX_PROGRAM_BYTES),
            reason: format!("the program is longer than {MAX_PROGRAM_BYTES} bytes"),
        });
    }
    let mut depth = 0usize;
    for (at, b) in program.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_PROGRAM_NESTING {
            return Err(ProjectionError::Refused {
                at: Position::of(program, at),
                reason: format!("brackets are nested deeper than {MAX_PROGRAM_NESTING}"),
            });
        }
    }
    Ok(())
}

/// Builtins a projection may not call, with why.
fn refused_builtin(name: &str, arity: usize) -> Option<&'static str> {
    Some(match (name, arity) {
        ("env", 0) => "`env` reads the bridge's environment, which holds secrets",
        ("input" | "inputs", 0) => "a projection has one input, the result; there are no more",
        ("halt", 0 | 1) | ("halt_error", 0 | 1) => "a projection cannot stop the process",
        ("debug", 0 | 1) | ("stderr", 0) => "a projection cannot write to the bridge's log",
        ("repeat", 1) | ("while" | "until", 2) | ("recurse", 1 | 2) => {
            "this generator can run without end (`..` and `recurse` walk a value and end)"
        }
        _ => return None,
    })
}

/// What a name in scope is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Binding {
    /// A definition whose body is being checked: a call to it is recursion.
    Defining,
    /// A definition or a filter parameter.
    Defined,
}

struct Scope<'s> {
    names: Vec<(&'s str, usize, Binding)>,
}

impl<'s> Scope<'s> {
    fn find(&self, name: &str, arity: usize) -> Option<Binding> {
        self.names
            .iter()
            .rev()
            .find(|(n, a, _)| *n == name && *a == arity)
            .map(|(_, _, b)| *b)
    }
}

/// Refuses what the parent module lists: the environment, inputs, exiting, logging,
/// recursion, unbounded generators and reserved names.
pub(super) fn program<'s>(term: &Term<&'s str>) -> Result<(), Refusal<'s>> {
    let mut scope = Scope { names: Vec::new() };
    check_term(term, &mut scope)
}

fn reserved<'s>(name: &'s str) -> Result<(), Refusal<'s>> {
    if name.trim_start_matches('$').starts_with(RESERVED) {
        return Err(Refusal {
            at: name,
            reason: format!("names starting with `{RESERVED}` are reserved (`{name}`)"),
        });
    }
    Ok(())
}

fn check_term<'s>(term: &Term<&'s str>, scope: &mut Scope<'s>) -> Result<(), Refusal<'s>> {
    match term {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Break(_) | Term::Arr(None) => Ok(()),
        Term::Var(name) => {
            if *name == "$ENV" {
                return Err(Refusal {
                    at: name,
                    reason: "`$ENV` is the bridge's environment, which holds secrets".to_owned(),
                });
            }
            reserved(name)
        }
        Term::Str(_, parts) => parts.iter().try_for_each(|part| match part {
            StrPart::Term(t) => check_term(t, scope),
            StrPart::Str(_) | StrPart::Char(_) => Ok(()),
        }),
        Term::Arr(Some(t)) | Term::Neg(t) | Term::Label(_, t) => check_term(t, scope),
        Term::Obj(entries) => entries.iter().try_for_each(|(k, v)| {
            check_term(k, scope)?;
            v.as_ref().map_or(Ok(()), |v| check_term(v, scope))
        }),
        Term::BinOp(l, op, r) => {
            check_term(l, scope)?;
            if let BinaryOp::Pipe(Some(pattern)) = op {
                check_pattern(pattern, scope)?;
            }
            check_term(r, scope)
        }
        Term::Fold(_, xs, pattern, args) => {
            check_term(xs, scope)?;
            check_pattern(pattern, scope)?;
            args.iter().try_for_each(|t| check_term(t, scope))
        }
        Term::TryCatch(t, c) => {
            check_term(t, scope)?;
            c.as_ref().map_or(Ok(()), |c| check_term(c, scope))
        }
        Term::IfThenElse(branches, otherwise) => {
            for (cond, then) in branches {
                check_term(cond, scope)?;
                check_term(then, scope)?;
            }
            otherwise.as_ref().map_or(Ok(()), |t| check_term(t, scope))
        }
        Term::Path(t, path) => {
            check_term(t, scope)?;
            check_path(path, scope)
        }
        Term::Call(name, args) => {
            reserved(name)?;
            match scope.find(name, args.len()) {
                Some(Binding::Defining) => {
                    return Err(Refusal {
                        at: name,
                        reason: format!(
                            "`{name}` calls itself; recursive definitions are not allowed in \
                             projections (they can run without end)"
                        ),
                    });
                }
                Some(Binding::Defined) => {}
                None => {
                    if let Some(why) = refused_builtin(name, args.len()) {
                        return Err(Refusal {
                            at: name,
                            reason: format!("`{name}/{}`: {why}", args.len()),
                        });
                    }
                }
            }
            args.iter().try_for_each(|t| check_term(t, scope))
        }
        Term::Def(defs, body) => {
            let outer = scope.names.len();
            for def in defs {
                check_def(def, scope)?;
            }
            let result = check_term(body, scope);
            scope.names.truncate(outer);
            result
        }
    }
}

fn check_def<'s>(def: &Def<&'s str>, scope: &mut Scope<'s>) -> Result<(), Refusal<'s>> {
    reserved(def.name)?;
    let arity = def.args.len();
    scope.names.push((def.name, arity, Binding::Defining));
    let own = scope.names.len();
    for arg in &def.args {
        reserved(arg)?;
        if !arg.starts_with('$') {
            scope.names.push((arg, 0, Binding::Defined));
        }
    }
    let result = check_term(&def.body, scope);
    scope.names.truncate(own);
    if let Some(last) = scope.names.last_mut() {
        last.2 = Binding::Defined;
    }
    result
}

fn check_pattern<'s>(pattern: &Pattern<&'s str>, scope: &mut Scope<'s>) -> Result<(), Refusal<'s>> {
    match pattern {
        Pattern::Var(name) => reserved(name),
        Pattern::Arr(items) => items.iter().try_for_each(|p| check_pattern(p, scope)),
        Pattern::Obj(entries) => entries.iter().try_for_each(|(k, p)| {
            check_term(k, scope)?;
            check_pattern(p, scope)
        }),
    }
}

fn check_path<'s>(path: &Path<Term<&'s str>>, scope: &mut Scope<'s>) -> Result<(), Refusal<'s>> {
    path.0.iter().try_for_each(|(part, _)| match part {
        Part::Index(t) => check_term(t, scope),
        Part::Range(from, to) => {
            from.as_ref().map_or(Ok(()), |t| check_term(t, scope))?;
            to.as_ref().map_or(Ok(()), |t| check_term(t, scope))
        }
    })
}

/// How much of a term the rewrite meters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The program: every output of every compound term.
    Program,
    /// The standard library: everything that builds a value (arrays, objects, operators,
    /// strings, `reduce`/`foreach` steps), but not calls and paths, whose tail calls jaq runs
    /// without growing the stack, and which would stop being tail calls if metered.
    Library,
}

/// The program, with its work routed through the meter.
pub(super) fn rewrite(term: Term<&str>) -> Term<&str> {
    rewrite_term(term, Mode::Program)
}

/// A definition of the standard library, with the values it builds metered.
pub(super) fn rewrite_library<'s>(term: Term<&'static str>) -> Term<&'s str> {
    rewrite_term(term, Mode::Library)
}

fn tick(term: Term<&str>) -> Term<&str> {
    Term::BinOp(
        Box::new(term),
        BinaryOp::Pipe(None),
        Box::new(Term::Call(TICK, Vec::new())),
    )
}

fn step(term: Term<&str>) -> Term<&str> {
    Term::BinOp(
        Box::new(term),
        BinaryOp::Pipe(None),
        Box::new(Term::Call(STEP, Vec::new())),
    )
}

fn rewrite_term<'s>(term: Term<&'s str>, mode: Mode) -> Term<&'s str> {
    let rw = |t: Term<&'s str>| rewrite_term(t, mode);
    let rwb = |t: Box<Term<&'s str>>| Box::new(rewrite_term(*t, mode));
    let program = mode == Mode::Program;
    match term {
        Term::Id | Term::Num(_) | Term::Var(_) | Term::Break(_) | Term::Arr(None) => term,
        Term::Recurse if program => step(term),
        Term::Recurse => term,
        Term::Str(format, parts) => {
            let interpolated = parts.iter().any(|p| matches!(p, StrPart::Term(_)));
            let parts = parts
                .into_iter()
                .map(|part| match part {
                    StrPart::Term(t) => StrPart::Term(rw(t)),
                    other => other,
                })
                .collect();
            let term = Term::Str(format, parts);
            if interpolated || format.is_some() {
                tick(term)
            } else {
                term
            }
        }
        Term::Arr(Some(t)) => tick(Term::Arr(Some(rwb(t)))),
        Term::Obj(entries) => tick(Term::Obj(
            entries
                .into_iter()
                .map(|(k, v)| (rw(k), v.map(rw)))
                .collect(),
        )),
        Term::Neg(t) => tick(Term::Neg(rwb(t))),
        Term::Label(name, t) => Term::Label(name, rwb(t)),
        Term::BinOp(l, BinaryOp::Math(Math::Mul), r) => tick(Term::Call(MUL, vec![rw(*l), rw(*r)])),
        Term::BinOp(l, BinaryOp::UpdateMath(Math::Mul), r) => {
            // `l *= r` is `r as $x | l |= . * $x`.
            let update = Term::BinOp(
                rwb(l),
                BinaryOp::Update,
                Box::new(Term::Call(MUL, vec![Term::Id, Term::Var(MUL_VAR)])),
            );
            Term::BinOp(
                rwb(r),
                BinaryOp::Pipe(Some(Pattern::Var(MUL_VAR))),
                Box::new(update),
            )
        }
        Term::BinOp(l, op, r) => {
            let op = match op {
                BinaryOp::Pipe(Some(pattern)) => {
                    BinaryOp::Pipe(Some(rewrite_pattern(pattern, mode)))
                }
                op => op,
            };
            let plumbing = matches!(op, BinaryOp::Pipe(_) | BinaryOp::Comma);
            let term = Term::BinOp(rwb(l), op, rwb(r));
            if plumbing { term } else { tick(term) }
        }
        Term::Fold(kind, xs, pattern, args) => {
            let mut args: Vec<_> = args.into_iter().map(rw).collect();
            // Each step of `reduce`/`foreach` is metered, whatever the update is.
            if let Some(update) = args.get_mut(1) {
                *update = tick(core::mem::take(update));
            }
            let term = Term::Fold(kind, rwb(xs), rewrite_pattern(pattern, mode), args);
            if program { tick(term) } else { term }
        }
        Term::TryCatch(t, c) => Term::TryCatch(rwb(t), c.map(rwb)),
        Term::IfThenElse(branches, otherwise) => Term::IfThenElse(
            branches.into_iter().map(|(c, t)| (rw(c), rw(t))).collect(),
            otherwise.map(rwb),
        ),
        Term::Path(t, path) => {
            let path = Path(
                path.0
                    .into_iter()
                    .map(|(part, opt)| {
                        let part = match part {
                            Part::Index(i) => Part::Index(rw(i)),
                            Part::Range(from, to) => Part::Range(from.map(rw), to.map(rw)),
                        };
                        (part, opt)
                    })
                    .collect(),
            );
            let term = Term::Path(rwb(t), path);
            if program { step(term) } else { term }
        }
        Term::Call(name, args) => {
            let term = Term::Call(name, args.into_iter().map(rw).collect());
            if program { tick(term) } else { term }
        }
        Term::Def(defs, body) => Term::Def(
            defs.into_iter()
                .map(|def| Def {
                    body: rw(def.body),
                    ..def
                })
                .collect(),
            rwb(body),
        ),
    }
}

fn rewrite_pattern(pattern: Pattern<&str>, mode: Mode) -> Pattern<&str> {
    match pattern {
        Pattern::Var(_) => pattern,
        Pattern::Arr(items) => Pattern::Arr(
            items
                .into_iter()
                .map(|p| rewrite_pattern(p, mode))
                .collect(),
        ),
        Pattern::Obj(entries) => Pattern::Obj(
            entries
                .into_iter()
                .map(|(k, p)| (rewrite_term(k, mode), rewrite_pattern(p, mode)))
                .collect(),
        ),
    }
}
