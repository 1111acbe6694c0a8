//! The cut of [`super::cut`], read from a JSON text instead of a parsed value.
//!
//! An upstream's answer arrives as JSON text. Parsed into a `serde_json::Value` (with
//! `preserve_order`, as the workspace builds it), an array of objects weighs five to six times
//! its text, so a 5 MB answer cut to a budget peaked at well over the "< 3× its size" of issue 27
//! before anything was cut. [`cut_json`] cuts the text itself and parses only what it keeps:
//!
//! - whether a part fits is its compact length, counted by a serde visitor over its text that
//!   stops as soon as the count passes the room left; strings are counted unescaped and escaped
//!   again, numbers as serde_json writes the number it reads, so every size is the one the
//!   parsed value would have;
//! - an array that does not fit is read twice: once to count its items (a marker's room depends
//!   on the count, as in [`super::cut`]), then item by item from the start until the first one
//!   that does not fit, where the walk stops; nothing past it is read again;
//! - an object that does not fit is read once: the walk that counts its members also keeps the
//!   first ones' keys and texts, as many as its room could hold, and counts the items of those
//!   that are arrays, and the cut takes them from there (a second walk read a member that does
//!   not fit, often most of the object, again, and a third counted its items: an MCP server's
//!   `{"items": [5 MB]}` was read three times);
//! - only the kept parts are parsed, into the small value that is served.
//!
//! So cutting a 5 MB array to 64 KiB reads its text about twice and allocates about the size of
//! the cut. The result equals `cut(&serde_json::from_str(text)?, max_bytes)` for every text
//! whose objects have no duplicate keys. RFC 8259 leaves duplicates' meaning open: a parsed
//! value keeps one member per key, a text is counted with all of them, so with duplicates the
//! cut may fall earlier (still valid JSON, still within the budget).

use std::fmt;
use std::ops::ControlFlow;

use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::{
    Cut, MARKER, MIN_BUDGET, MIN_NESTED, Omitted, cut_string, items_marker, members_marker,
    number_len, serialized_len, string_len,
};

/// [`super::cut`] of the value `json` holds, read from its text: the same [`Cut`], without
/// parsing more than the kept parts (see the module documentation).
pub fn cut_json(json: &RawValue, max_bytes: usize) -> Cut {
    let budget = max_bytes.max(MIN_BUDGET);
    let text = json.get();
    if fits(text, budget).is_some()
        && let Some(value) = parse(text)
    {
        return Cut {
            value,
            cut: false,
            omitted: Omitted::default(),
        };
    }
    let mut omitted = Omitted::default();
    // As in `cut`: with at least MIN_BUDGET bytes some cut form always fits.
    let value = fit(text, budget, 0, &mut omitted, None).unwrap_or(Value::Null);
    Cut {
        value,
        cut: true,
        omitted,
    }
}

/// The length of the compact serialization of the value `text` holds, if it is at most `room`;
/// reads no further than needed to tell. `None` too for a text serde_json cannot parse (only a
/// nesting deeper than its limit, in a text that [`RawValue`] accepted).
fn fits(text: &str, room: usize) -> Option<usize> {
    let mut size = 0;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Len {
        room,
        size: &mut size,
    }
    .deserialize(&mut deserializer)
    .ok()?;
    Some(size)
}

/// The value `text` holds, parsed (only ever a part that fits a budget).
fn parse(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

/// How deep a cut descends into nested arrays and objects: serde_json's own nesting limit, so
/// the cut of a text goes no deeper than a parsed value can be. A text (which [`RawValue`]
/// accepts at any depth) nested deeper is cut above that depth: each descent is a few stack
/// frames, and an upstream's 5 MB of `[[[[…` would otherwise overflow the stack.
const MAX_DEPTH: usize = 128;

/// A form of the value `text` holds whose serialization is at most `room` bytes, or `None`
/// when not even a marker fits (or it lies deeper than [`MAX_DEPTH`]): [`super::fit`] over a
/// text, `depth` levels down.
/// `items` is the number of items of `text`, when it is an array whose items were counted.
fn fit(
    text: &str,
    room: usize,
    depth: usize,
    omitted: &mut Omitted,
    items: Option<usize>,
) -> Option<Value> {
    if fits(text, room).is_some()
        && let Some(value) = parse(text)
    {
        return Some(value);
    }
    match text.trim_start().as_bytes().first() {
        Some(b'"') => {
            let s: String = serde_json::from_str(text).ok()?;
            cut_string(&s, room, omitted).map(Value::String)
        }
        Some(b'[') if depth < MAX_DEPTH => {
            cut_array(text, room, depth, omitted, items).map(Value::Array)
        }
        Some(b'{') if depth < MAX_DEPTH => {
            cut_object(text, room, depth, omitted).map(Value::Object)
        }
        // A scalar other than a string cannot be shortened.
        _ => None,
    }
}

/// [`super::cut_array`] over the text of an array of `items` items (counted here when `None`).
fn cut_array(
    text: &str,
    room: usize,
    depth: usize,
    omitted: &mut Omitted,
    items: Option<usize>,
) -> Option<Vec<Value>> {
    let count = match items {
        Some(count) => count,
        None => walk(text, Count::new(text, 0))?.count,
    };
    let marker_room = 1 + serialized_len(&items_marker(count));
    let mut left = room.checked_sub(2 + marker_room)?;
    let mut kept = Vec::new();
    walk(
        text,
        Items(|item: &str| {
            let comma = usize::from(!kept.is_empty());
            let Some(item_room) = left.checked_sub(comma) else {
                return ControlFlow::Break(());
            };
            if let Some(len) = fits(item, item_room)
                && let Some(value) = parse(item)
            {
                left = item_room - len;
                kept.push(value);
                return ControlFlow::Continue(());
            }
            if item_room >= MIN_NESTED
                && let Some(cut) = fit(item, item_room, depth + 1, omitted, None)
            {
                kept.push(cut);
            }
            ControlFlow::Break(())
        }),
    );
    let more = count.saturating_sub(kept.len());
    if more > 0 {
        omitted.items += more;
        kept.push(items_marker(more));
    }
    Some(kept)
}

/// [`super::cut_object`] over the text of an object.
fn cut_object(
    text: &str,
    room: usize,
    depth: usize,
    omitted: &mut Omitted,
) -> Option<Map<String, Value>> {
    // No object's cut looks at more members than this: each member it keeps takes at least four
    // bytes of the room (`"":0`), and it looks at one more, the one that does not fit.
    let Census {
        count,
        ellipses,
        members,
    } = walk(text, Count::new(text, room / 4 + 2))?;
    // `…`, `……`, ...: the first such key the object does not have, as `cut_object` picks it.
    let mut repeat = 1;
    while ellipses.contains(&repeat) {
        repeat += 1;
    }
    let marker_key = MARKER.repeat(repeat);
    let marker_room = 1 + string_len(&marker_key) + 1 + serialized_len(&members_marker(count));
    let mut left = room.checked_sub(2 + marker_room)?;
    let mut kept = Map::new();
    // Members kept, counted apart from the map, which a duplicate key would not grow.
    let mut taken = 0;
    for (key, value, items) in members {
        let comma = usize::from(taken > 0);
        let Some(value_room) = left.checked_sub(comma + string_len(&key) + 1) else {
            break;
        };
        if let Some(len) = fits(value, value_room)
            && let Some(parsed) = parse(value)
        {
            left = value_room - len;
            kept.insert(key, parsed);
            taken += 1;
            continue;
        }
        if value_room >= MIN_NESTED
            && let Some(cut) = fit(value, value_room, depth + 1, omitted, items)
        {
            kept.insert(key, cut);
            taken += 1;
        }
        break;
    }
    let more = count.saturating_sub(taken);
    if more > 0 {
        omitted.members += more;
        kept.insert(marker_key, members_marker(more));
    }
    Some(kept)
}

/// Runs `visitor` over `text`. A walk that stops early does so by failing (serde's only way to
/// leave a sequence half read), so a failure is not an error here: the visitor has kept what it
/// needed. `None` only when a visitor that returns a value did not get to.
fn walk<'t, V: Visitor<'t>>(text: &'t str, visitor: V) -> Option<V::Value> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    (&mut deserializer).deserialize_any(visitor).ok()
}

/// Stopping a walk: the error serde_json gets from [`Items`], never seen.
const STOP: &str = "the cut has what it needs";

/// Counts the compact serialization's bytes into `size`, failing once it passes `room`.
struct Len<'s> {
    room: usize,
    size: &'s mut usize,
}

impl Len<'_> {
    fn add<E: de::Error>(&mut self, bytes: usize) -> Result<(), E> {
        *self.size = self.size.saturating_add(bytes);
        if *self.size > self.room {
            Err(E::custom("over the room"))
        } else {
            Ok(())
        }
    }

    fn nested(&mut self) -> Len<'_> {
        Len {
            room: self.room,
            size: &mut *self.size,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Len<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// The sizes are `walk_len`'s; numbers are made as `Value`'s own visitor makes them.
impl<'de> Visitor<'de> for Len<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.add(4)
    }

    fn visit_bool<E: de::Error>(mut self, v: bool) -> Result<(), E> {
        self.add(if v { 4 } else { 5 })
    }

    fn visit_u64<E: de::Error>(mut self, v: u64) -> Result<(), E> {
        self.add(number_len(&Number::from(v)))
    }

    fn visit_i64<E: de::Error>(mut self, v: i64) -> Result<(), E> {
        self.add(number_len(&Number::from(v)))
    }

    fn visit_f64<E: de::Error>(mut self, v: f64) -> Result<(), E> {
        // `Value` turns a float it cannot hold into `null`.
        self.add(Number::from_f64(v).map_or(4, |n| number_len(&n)))
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.add(string_len(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.add(2)?;
        let mut first = true;
        while seq.next_element_seed(self.nested())?.is_some() {
            if !first {
                self.add(1)?;
            }
            first = false;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.add(2)?;
        let mut first = true;
        // A key is a string to serde_json's map keys too; then its colon, and its comma.
        while map.next_key_seed(self.nested())?.is_some() {
            self.add(1 + usize::from(!first))?;
            first = false;
            map.next_value_seed(self.nested())?;
        }
        Ok(())
    }
}

/// Counts an array's items, or an object's members (with the keys made only of `…`), and keeps
/// an object's first `members` members, each its key, its value's text and, when the value is
/// an array, its item count. An object's cut then reads its members from here: walking the text
/// a second time read a member that does not fit, such as the 5 MB array of `{"items": […]}`,
/// to its end once more, and counting that array's items a third time.
///
/// A kept value is walked by [`ItemCount`], not taken as a [`RawValue`] (which would read it
/// without counting), so its text is found from where the keys around it are: each key is
/// taken as its raw text, a slice of the object's `text`, and a value lies between the colon
/// after its key and the comma before the next key (or the object's closing brace). Between
/// JSON's tokens there is only white space, so the slice is exactly the value's text.
struct Count<'t> {
    text: &'t str,
    members: usize,
}

impl<'t> Count<'t> {
    fn new(text: &'t str, members: usize) -> Self {
        Self { text, members }
    }

    /// Where a value ends that `token` (the comma before the next key, the object's closing
    /// brace) follows, the token lying before `at`: back over white space, the token, white
    /// space.
    fn end_before(&self, at: usize, token: char) -> Option<usize> {
        let before = self.text.get(..at)?.trim_ascii_end();
        Some(before.strip_suffix(token)?.trim_ascii_end().len())
    }

    /// Where `part` (a slice of the text) starts in it.
    fn offset(&self, part: &str) -> Option<usize> {
        let at = (part.as_ptr() as usize).checked_sub(self.text.as_ptr() as usize)?;
        (at + part.len() <= self.text.len()).then_some(at)
    }
}

/// An array's item count; or an object's member count, `n` for each of its keys that is `…`
/// written `n` times, and its first members (as many as [`Count`] was asked to keep): key,
/// value's text, and item count when the value is an array.
struct Census<'t> {
    count: usize,
    ellipses: Vec<usize>,
    members: Vec<(String, &'t str, Option<usize>)>,
}

/// A kept member whose value's text ends where the next key (or the object) does.
struct Open {
    key: String,
    start: usize,
    items: Option<usize>,
}

impl<'t> Visitor<'t> for Count<'t> {
    type Value = Census<'t>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array or an object")
    }

    fn visit_seq<A: SeqAccess<'t>>(self, mut seq: A) -> Result<Census<'t>, A::Error> {
        let mut count = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            count += 1;
        }
        Ok(Census {
            count,
            ellipses: Vec::new(),
            members: Vec::new(),
        })
    }

    fn visit_map<A: MapAccess<'t>>(self, mut map: A) -> Result<Census<'t>, A::Error> {
        let lost = || de::Error::custom("a key outside the object's text");
        let mut census = Census {
            count: 0,
            ellipses: Vec::new(),
            members: Vec::new(),
        };
        let mut open: Option<Open> = None;
        while let Some(key) = map.next_key::<&'t RawValue>()? {
            let key_at = self.offset(key.get()).ok_or_else(lost)?;
            if let Some(member) = open.take() {
                let end = self.end_before(key_at, ',').ok_or_else(lost)?;
                census.close(member, &self.text[..end]);
            }
            let name = key_name(key.get()).map_err(de::Error::custom)?;
            census.ellipses.extend(name.as_deref().and_then(ellipses));
            if census.members.len() < self.members {
                // Forward from the key over white space, the colon, white space.
                let after_key = key_at + key.get().len();
                let rest = self.text[after_key..].trim_ascii_start();
                let value = rest.strip_prefix(':').ok_or_else(lost)?.trim_ascii_start();
                let start = self.text.len() - value.len();
                let items = map.next_value_seed(ItemCount)?;
                let key = match name {
                    Some(name) => name,
                    None => serde_json::from_str(key.get()).map_err(de::Error::custom)?,
                };
                open = Some(Open { key, start, items });
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            census.count += 1;
        }
        if let Some(member) = open {
            let end = self.end_before(self.text.len(), '}').ok_or_else(lost)?;
            census.close(member, &self.text[..end]);
        }
        Ok(census)
    }
}

impl<'t> Census<'t> {
    /// Keeps `member`, whose value's text ends where `upto` does.
    fn close(&mut self, member: Open, upto: &'t str) {
        let value = upto.get(member.start..).unwrap_or_default();
        self.members.push((member.key, value, member.items));
    }
}

/// The key whose raw text (quotes, escapes) is `raw`, parsed when it may be a `…` key (it has
/// an escape or a `…`); `Ok(None)` for any other, which is not made until it is needed.
fn key_name(raw: &str) -> serde_json::Result<Option<String>> {
    if raw.contains('\\') || raw.contains('…') {
        serde_json::from_str(raw).map(Some)
    } else {
        Ok(None)
    }
}

/// A value walked to its end: `Some(n)` for an array of `n` items, `None` for anything else.
struct ItemCount;

impl<'de> DeserializeSeed<'de> for ItemCount {
    type Value = Option<usize>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemCount {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<usize>, A::Error> {
        let mut count = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            count += 1;
        }
        Ok(Some(count))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<usize>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// `Some(n)` when `key` is `…` written `n` times.
fn ellipses(key: &str) -> Option<usize> {
    let n = key.chars().count();
    (n > 0 && key.chars().all(|c| c == '…')).then_some(n)
}

/// Hands each item of an array to its function, as text, until the function breaks.
struct Items<F>(F);

impl<'de, F: FnMut(&'de str) -> ControlFlow<()>> Visitor<'de> for Items<F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            if (self.0)(item.get()).is_break() {
                return Err(de::Error::custom(STOP));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::budget::cut;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    /// Texts written otherwise than serde_json writes them: whitespace, escapes it does not
    /// use, numbers in other forms; the cut is the parsed value's.
    #[test]
    fn a_text_is_cut_as_its_parsed_value_is() {
        let texts = [
            r#" { "a\/b" : "\u00e9\ud83e\udd80\/" , "n" : [ 1E2, -0, 1.5e300, 12345678901234567890123, -9223372036854775808 ] } "#,
            "[\n  {\"title\": \"x\\ty\", \"body\": \"\\u0000\\u001f\"},\n  {\"…\": 1, \"……\": 2}\n]",
            r#"{"…": "mine", "k": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]}"#,
            r#""a long string that has to be cut somewhere after its first few dozen bytes, é é é""#,
            "[[[[[[[[[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]]]]]]]]]]",
            "[]",
            "{}",
            "null",
            "123456789012345678901234567890e-10",
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).unwrap();
            for budget in [1, 64, 70, 80, 100, 128, 200, 1000] {
                assert_eq!(
                    cut_json(&raw(text), budget),
                    cut(&value, budget),
                    "{text} at {budget}"
                );
            }
        }
    }

    #[test]
    fn sizes_are_those_of_the_parsed_value() {
        for text in [r#"[1E2, "\u00e9", "\/", {"a": -0}]"#, "1.0", "-1e-7"] {
            let value: Value = serde_json::from_str(text).unwrap();
            let len = serde_json::to_string(&value).unwrap().len();
            assert_eq!(fits(text, usize::MAX), Some(len), "{text}");
            assert_eq!(fits(text, len), Some(len), "{text}");
            assert_eq!(fits(text, len - 1), None, "{text}");
        }
    }

    /// An object's members are read from its one walk: as many as the cut can look at, however
    /// small they are, and a member too large to fit is cut inside.
    #[test]
    fn an_object_is_cut_from_the_members_its_count_kept() {
        let many: Map<String, Value> = (0..5_000).map(|i| (i.to_string(), json!(0))).collect();
        let one_big =
            json!({"items": (0..5_000).map(|i| json!({"i": i})).collect::<Vec<_>>(), "after": 1});
        for value in [Value::Object(many), one_big] {
            // Compact, and with white space wherever JSON allows it.
            let texts = [
                serde_json::to_string(&value).unwrap(),
                serde_json::to_string_pretty(&value).unwrap(),
            ];
            for text in texts {
                for budget in [64, 100, 256, 1000, 4096, 20_000] {
                    let result = cut_json(&raw(&text), budget);
                    assert_eq!(result, cut(&value, budget), "at {budget}");
                    assert!(result.cut, "at {budget}");
                }
            }
        }
    }

    /// The walk that counts an object's members keeps each kept value's exact text, and the
    /// item count of those that are arrays, so that no array is walked again to count it.
    #[test]
    fn an_objects_count_keeps_its_values_texts_and_their_item_counts() {
        let text = " {\"a\\/b\" :\t[1, [2, 3], {\"c\": [4]}] ,\n\"n\":null,\"s\" : \"x,}\" ,\"o\":{\"p\":[]} , \"e\": [] } ";
        let census = walk(text, Count::new(text, 10)).unwrap();
        assert_eq!(census.count, 5);
        let members: Vec<(&str, &str, Option<usize>)> = census
            .members
            .iter()
            .map(|(key, value, items)| (key.as_str(), *value, *items))
            .collect();
        assert_eq!(
            members,
            [
                ("a/b", r#"[1, [2, 3], {"c": [4]}]"#, Some(3)),
                ("n", "null", None),
                ("s", r#""x,}""#, None),
                ("o", r#"{"p":[]}"#, None),
                ("e", "[]", Some(0)),
            ]
        );
        // Fewer kept: the rest are counted, not kept.
        let census = walk(text, Count::new(text, 2)).unwrap();
        assert_eq!((census.count, census.members.len()), (5, 2));
        assert_eq!(census.members[1].1, "null");
    }

    #[test]
    fn a_long_array_stops_where_the_budget_does() {
        let value = Value::Array((0..10_000).map(|i| json!({"i": i})).collect());
        let text = serde_json::to_string(&value).unwrap();
        let result = cut_json(&raw(&text), 256);
        assert_eq!(result, cut(&value, 256));
        assert!(result.cut);
        assert!(result.omitted.items > 9_900);
    }
}
