//! The meter of one run, the jaq data type that carries it to the natives, and the natives and
//! definitions a projection is compiled with.

use std::cell::Cell;
use std::time::Instant;

use jaq_core::box_iter::box_once;
use jaq_core::data::{DataT, HasLut};
use jaq_core::load::parse::Def;
use jaq_core::native::{Fun, v};
use jaq_core::{Cv, Exn, Lut, Native, ValXs};
use jaq_json::Val;
use thiserror::Error;

use super::{Limits, MAX_VALUE_DEPTH, check};

/// Which limit a run went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Exhaustion {
    /// The time budget.
    #[error("it ran past its time budget")]
    Time,
    /// The fuel (units of work).
    #[error("it did more work than its budget allows")]
    Fuel,
    /// The output budget, or a string longer than it.
    #[error("its output is larger than the output budget")]
    Output,
    /// A value nested deeper than the limit.
    #[error("it built a value nested deeper than {MAX_VALUE_DEPTH} levels")]
    Depth,
}

/// The data type of a projection's run: jaq's JSON values, and the meter as global data.
pub(super) struct Run;

impl DataT for Run {
    type V<'a> = Val;
    type Data<'a> = RunData<'a>;
}

/// What every native of a run can reach.
#[derive(Clone, Copy)]
pub(super) struct RunData<'a> {
    pub(super) lut: &'a Lut<Run>,
    pub(super) meter: &'a Meter,
}

impl<'a> HasLut<'a, Run> for RunData<'a> {
    fn lut(&self) -> &'a Lut<Run> {
        self.lut
    }
}

/// How the deadline is checked: every this many units of work (reading the clock costs about
/// 20 ns, a unit of work a few).
const CLOCK_EVERY: u64 = 1024;

/// Fuel, deadline and output limit of one run. Once out, it stays out.
#[derive(Debug)]
pub(super) struct Meter {
    fuel: Cell<u64>,
    next_clock: Cell<u64>,
    deadline: Instant,
    output_bytes: usize,
    exhausted: Cell<Option<Exhaustion>>,
}

impl Meter {
    pub(super) fn new(limits: Limits) -> Self {
        Self {
            fuel: Cell::new(limits.fuel),
            next_clock: Cell::new(limits.fuel.saturating_sub(CLOCK_EVERY)),
            deadline: Instant::now() + limits.time,
            output_bytes: limits.output_bytes,
            exhausted: Cell::new(None),
        }
    }

    pub(super) fn exhausted(&self) -> Option<Exhaustion> {
        self.exhausted.get()
    }

    fn exhaust(&self, why: Exhaustion) -> Exhaustion {
        if self.exhausted.get().is_none() {
            self.exhausted.set(Some(why));
        }
        self.fuel.set(0);
        self.exhausted.get().unwrap_or(why)
    }

    /// Takes `units` of fuel, and reads the clock when due.
    pub(super) fn burn(&self, units: u64) -> Result<(), Exhaustion> {
        if let Some(why) = self.exhausted.get() {
            return Err(why);
        }
        let Some(left) = self.fuel.get().checked_sub(units) else {
            return Err(self.exhaust(Exhaustion::Fuel));
        };
        self.fuel.set(left);
        if left <= self.next_clock.get() {
            self.next_clock.set(left.saturating_sub(CLOCK_EVERY));
            if Instant::now() >= self.deadline {
                return Err(self.exhaust(Exhaustion::Time));
            }
        }
        Ok(())
    }

    /// Charges one unit and the size of `value` (nodes and string bytes), walking it only as
    /// far as the fuel lasts.
    pub(super) fn charge(&self, value: &Val) -> Result<(), Exhaustion> {
        self.burn(1)?;
        self.walk(value, 0)
    }

    fn walk(&self, value: &Val, depth: usize) -> Result<(), Exhaustion> {
        if depth > MAX_VALUE_DEPTH {
            return Err(self.exhaust(Exhaustion::Depth));
        }
        match value {
            Val::Arr(items) => {
                self.burn(1)?;
                items.iter().try_for_each(|item| self.walk(item, depth + 1))
            }
            Val::Obj(members) => {
                self.burn(1)?;
                members.iter().try_for_each(|(key, value)| {
                    self.walk(key, depth + 1)?;
                    self.walk(value, depth + 1)
                })
            }
            Val::TStr(bytes) | Val::BStr(bytes) => self.burn(1 + bytes.len() as u64 / 8),
            Val::Null | Val::Bool(_) | Val::Num(_) => self.burn(1),
        }
    }

    /// Refuses a string of `bytes` bytes when it is longer than the output budget.
    fn allow_string(&self, bytes: u128) -> Result<(), Exhaustion> {
        if bytes > self.output_bytes as u128 {
            return Err(self.exhaust(Exhaustion::Output));
        }
        Ok(())
    }
}

/// The exception the meter answers with: `halt` is the one `try` cannot catch.
fn stop<'a>(_: Exhaustion) -> ValXs<'a, Val> {
    box_once(Err(Exn::halt(0)))
}

fn tick_run<'a>(cv: Cv<'a, Run>) -> ValXs<'a, Val> {
    match cv.0.data().meter.charge(&cv.1) {
        Ok(()) => box_once(Ok(cv.1)),
        Err(why) => stop(why),
    }
}

fn step_run<'a>(cv: Cv<'a, Run>) -> ValXs<'a, Val> {
    match cv.0.data().meter.burn(1) {
        Ok(()) => box_once(Ok(cv.1)),
        Err(why) => stop(why),
    }
}

fn mul_run<'a>(mut cv: Cv<'a, Run>) -> ValXs<'a, Val> {
    let r = cv.0.pop_var();
    let l = cv.0.pop_var();
    let repeated = |s: &[u8], n: &Val| -> u128 {
        let times = match n {
            Val::Num(n) => n.as_isize().unwrap_or(isize::MAX).max(0) as u128,
            _ => 0,
        };
        s.len() as u128 * times
    };
    let bytes = match (&l, &r) {
        (Val::TStr(s) | Val::BStr(s), n @ Val::Num(_))
        | (n @ Val::Num(_), Val::TStr(s) | Val::BStr(s)) => repeated(s, n),
        _ => 0,
    };
    if let Err(why) = cv.0.data().meter.allow_string(bytes) {
        return stop(why);
    }
    box_once((l * r).map_err(Exn::from))
}

/// The natives a projection is compiled with: the meter's first (so nothing shadows them), then
/// jaq's own without those that reach the process (environment, exit, log).
pub(super) fn funs() -> impl Iterator<Item = Fun<Run>> {
    let tick = Native::<Run>::new(tick_run)
        .with_paths(|cv| match cv.0.data().meter.charge(&cv.1.0) {
            Ok(()) => box_once(Ok(cv.1)),
            Err(_) => box_once(Err(Exn::halt(0))),
        })
        .with_update(|cv, f| match cv.0.data().meter.charge(&cv.1) {
            Ok(()) => f(cv.1),
            Err(why) => stop(why),
        });
    let step = Native::<Run>::new(step_run)
        .with_paths(|cv| match cv.0.data().meter.burn(1) {
            Ok(()) => box_once(Ok(cv.1)),
            Err(_) => box_once(Err(Exn::halt(0))),
        })
        .with_update(|cv, f| match cv.0.data().meter.burn(1) {
            Ok(()) => f(cv.1),
            Err(why) => stop(why),
        });
    let ours: [Fun<Run>; 3] = [
        (check::TICK, v(0), tick),
        (check::STEP, v(0), step),
        (check::MUL, v(2), Native::<Run>::new(mul_run)),
    ];
    let theirs = jaq_core::funs::<Run>()
        .chain(jaq_std::funs::<Run>())
        .chain(jaq_json::funs::<Run>())
        .filter(|(name, _, _)| !LEFT_OUT_NATIVES.contains(name));
    ours.into_iter().chain(theirs)
}

/// Natives that reach the process: the environment, exiting it, its log.
const LEFT_OUT_NATIVES: &[&str] = &["env", "halt", "debug_empty", "stderr_empty"];

/// Definitions of the standard library left out with the natives they call.
const LEFT_OUT_DEFS: &[&str] = &["debug", "stderr", "halt", "halt_error"];

/// The prelude: jaq's definitions, rewritten so that their work is metered too (see
/// [`check::rewrite_library`]), without those that reach the process.
pub(super) fn defs<'s>() -> impl Iterator<Item = Def<&'s str>> {
    jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .filter(|def| !LEFT_OUT_DEFS.contains(&def.name))
        // The library's text is `'static`; it is shortened to the program's.
        .map(|def| Def {
            name: def.name,
            args: def.args.into_iter().collect(),
            body: check::rewrite_library(def.body),
        })
}
