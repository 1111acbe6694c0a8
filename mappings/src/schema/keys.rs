//! Keyword lookups in schema objects that do not hash the keyword.
//!
//! A `serde_json::Map` (an `IndexMap` with SipHash, for `preserve_order`) hashes the key on every
//! `get`, `get_mut` and `remove` once it holds two entries. The schema walks ask each object for
//! dozens of keywords it almost never has (`convert` asked for about sixty per object before it
//! walked each object's keys once instead: `openapi::schema::Check`), and schema
//! objects hold a handful of keys: hashing those absent keywords took about a tenth of start-up
//! on 300 documents. Up to [`SCAN_UP_TO`] entries, comparing the keys one by one is cheaper and
//! finds the same entry (keys are unique); larger maps are hashed as before.

use serde_json::{Map, Value};

/// The largest map searched by comparing its keys.
const SCAN_UP_TO: usize = 16;

/// `map.get(key)`.
pub(crate) fn get<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() <= SCAN_UP_TO {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
    }
}

/// `map.get_mut(key)`.
pub(crate) fn get_mut<'m>(map: &'m mut Map<String, Value>, key: &str) -> Option<&'m mut Value> {
    if map.len() <= SCAN_UP_TO {
        map.iter_mut().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get_mut(key)
    }
}

/// `map.contains_key(key)`.
pub(crate) fn has(map: &Map<String, Value>, key: &str) -> bool {
    get(map, key).is_some()
}

/// `map.remove(key)` (a swap-remove, as serde_json's with `preserve_order`): the map is only
/// touched when it holds `key`, as `remove` leaves it alone otherwise.
pub(crate) fn remove(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if has(map, key) { map.remove(key) } else { None }
}

/// `value.get(key)` for a value that may not be an object.
pub(crate) fn field<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    value.as_object().and_then(|map| get(map, key))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn small_and_large_maps_answer_as_the_map_does() {
        for size in [0, 1, 2, SCAN_UP_TO, SCAN_UP_TO + 1, 40] {
            let mut map: Map<String, Value> =
                (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
            for key in ["k0", "k1", "k15", "k16", "k39", "absent", ""] {
                assert_eq!(get(&map, key), map.get(key), "{size} {key}");
                assert_eq!(has(&map, key), map.contains_key(key), "{size} {key}");
                assert_eq!(field(&Value::Object(map.clone()), key), map.get(key));
                let mut expected = map.clone();
                let removed = expected.remove(key);
                let mut actual = map.clone();
                assert_eq!(remove(&mut actual, key), removed);
                // The same order afterwards: a swap-remove moves the last entry.
                assert!(actual.iter().eq(expected.iter()), "{size} {key}");
                if let Some(v) = get_mut(&mut map, key) {
                    *v = json!("changed");
                }
                assert_eq!(
                    map.get(key).is_some_and(|v| v == "changed"),
                    get(&map, key).is_some()
                );
            }
        }
        assert_eq!(field(&json!([1]), "k0"), None);
    }
}
