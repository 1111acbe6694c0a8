//! Conversions between serde_json's values and jaq's, the way out metered.

use jaq_json::{Map, Num, Rc, Val};
use serde_json::{Number, Value};

use super::MAX_VALUE_DEPTH;
use super::meter::{Exhaustion, Meter};

/// `value` as jaq's value. Results come from JSON parsers with their own depth limit (serde_json
/// stops at 128), so the recursion is bounded by the input.
pub(super) fn to_jaq(value: Value) -> Val {
    match value {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(b),
        Value::Number(n) => Val::Num(number_to_jaq(&n)),
        Value::String(s) => Val::utf8_str(s),
        Value::Array(items) => Val::Arr(Rc::new(items.into_iter().map(to_jaq).collect())),
        Value::Object(members) => {
            let mut map = Map::default();
            map.reserve(members.len());
            for (key, value) in members {
                map.insert(Val::utf8_str(key), to_jaq(value));
            }
            Val::obj(map)
        }
    }
}

fn number_to_jaq(n: &Number) -> Num {
    if let Some(i) = n.as_i64().and_then(|i| isize::try_from(i).ok()) {
        Num::Int(i)
    } else if let Some(u) = n.as_u64() {
        Num::from_integral(u)
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// `value` as JSON, with the bytes its compact form takes, or the limit it passed: `room` bytes
/// of output, the meter's fuel (one unit a node, so a value that shares its parts many times
/// cannot make the conversion run long), or [`MAX_VALUE_DEPTH`].
pub(super) fn from_jaq(
    value: &Val,
    room: usize,
    meter: &Meter,
) -> Result<(Value, usize), Exhaustion> {
    let mut size = 0;
    let json = convert(value, room, meter, &mut size, 0)?;
    Ok((json, size))
}

fn convert(
    value: &Val,
    room: usize,
    meter: &Meter,
    size: &mut usize,
    depth: usize,
) -> Result<Value, Exhaustion> {
    if depth > MAX_VALUE_DEPTH {
        return Err(Exhaustion::Depth);
    }
    meter.burn(1)?;
    let json = match value {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => number_from_jaq(n),
        Val::TStr(bytes) | Val::BStr(bytes) => {
            Value::String(String::from_utf8_lossy(bytes).into_owned())
        }
        Val::Arr(items) => {
            *size += 2 + items.len();
            let mut out = Vec::with_capacity(items.len().min(room));
            for item in items.iter() {
                out.push(convert(item, room, meter, size, depth + 1)?);
            }
            Value::Array(out)
        }
        Val::Obj(members) => {
            *size += 2 + 2 * members.len();
            let mut out = serde_json::Map::with_capacity(members.len().min(room));
            for (key, value) in members.iter() {
                let key = match key {
                    Val::TStr(bytes) | Val::BStr(bytes) => {
                        String::from_utf8_lossy(bytes).into_owned()
                    }
                    // jaq allows keys that are not strings; JSON does not: they are written as
                    // their JSON text.
                    other => other.to_string(),
                };
                *size += key.len() + 2;
                let value = convert(value, room, meter, size, depth + 1)?;
                out.insert(key, value);
            }
            Value::Object(out)
        }
    };
    *size += match &json {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(_) | Value::Object(_) => 0,
    };
    if *size > room {
        return Err(Exhaustion::Output);
    }
    Ok(json)
}

fn number_from_jaq(n: &Num) -> Value {
    match n {
        Num::Int(i) => Value::from(*i as i64),
        Num::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        // Big integers and decimals kept as text: their text is JSON's.
        other => other
            .to_string()
            .parse::<Number>()
            .map(Value::Number)
            .unwrap_or(Value::Null),
    }
}
