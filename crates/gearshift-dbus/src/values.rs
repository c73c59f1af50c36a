//! Reading and building the variants the interface carries (`OwnedValue`), in one place for
//! the daemon and every client. Readers return `None` for a value of another type, so a
//! client never guesses.

use std::collections::HashMap;

use zbus::zvariant::{OwnedValue, Value};

/// A dictionary of the interface (`a{sv}`): a property map, a profile, a hold, stats.
pub type Dict = HashMap<String, OwnedValue>;

/// A string value.
pub fn text(value: &Value<'_>) -> Option<String> {
    match value {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// A boolean value.
pub fn flag(value: &Value<'_>) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// A `d` value (UPower's battery percentage, for one).
pub fn float(value: &Value<'_>) -> Option<f64> {
    match value {
        Value::F64(x) => Some(*x),
        _ => None,
    }
}

/// A `u` value.
pub fn unsigned(value: &Value<'_>) -> Option<u32> {
    match value {
        Value::U32(n) => Some(*n),
        _ => None,
    }
}

/// A `t` value.
pub fn unsigned64(value: &Value<'_>) -> Option<u64> {
    match value {
        Value::U64(n) => Some(*n),
        _ => None,
    }
}

/// An `x` value.
pub fn signed64(value: &Value<'_>) -> Option<i64> {
    match value {
        Value::I64(n) => Some(*n),
        _ => None,
    }
}

/// The entries of an `aa{sv}` value; entries that are no dictionary are left out, and so is
/// an entry holding a value that cannot be owned (a file descriptor).
pub fn dicts(value: &Value<'_>) -> Vec<Dict> {
    let Value::Array(items) = value else {
        return Vec::new();
    };
    items.iter().filter_map(dict).collect()
}

/// An `a{sv}` value as a dictionary; None for a value of another type or one holding a value
/// that cannot be owned (a file descriptor).
pub fn dict(value: &Value<'_>) -> Option<Dict> {
    let Value::Dict(d) = value else { return None };
    let mut out = Dict::new();
    for (key, value) in d.iter() {
        let Value::Str(key) = key else { continue };
        let value = match value {
            Value::Value(inner) => inner.try_to_owned().ok()?,
            other => other.try_to_owned().ok()?,
        };
        out.insert(key.to_string(), value);
    }
    Some(out)
}

/// An owned copy of a plain value.
pub fn owned(value: Value<'_>) -> OwnedValue {
    // Only plain values are built here; they never hold file descriptors, which is the one
    // case try_from can fail.
    OwnedValue::try_from(value).unwrap_or_else(|_| OwnedValue::from(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_take_their_own_type_only() {
        assert_eq!(text(&Value::from("x")), Some("x".to_owned()));
        assert_eq!(text(&Value::from(true)), None);
        assert_eq!(flag(&Value::from(true)), Some(true));
        assert_eq!(flag(&Value::from(1u32)), None);
        assert_eq!(unsigned(&Value::from(7u32)), Some(7));
        assert_eq!(unsigned(&Value::from(7u64)), None);
        assert_eq!(unsigned64(&Value::from(7u64)), Some(7));
        assert_eq!(unsigned64(&Value::from(7u32)), None);
        assert_eq!(signed64(&Value::from(-7i64)), Some(-7));
        assert_eq!(signed64(&Value::from(7u64)), None);
    }

    #[test]
    fn dicts_read_an_array_of_dictionaries() {
        let entry = HashMap::from([("name".to_owned(), Value::from("a"))]);
        let value = Value::from(vec![entry]);
        let read = dicts(&value);
        assert_eq!(read.len(), 1);
        assert_eq!(text(&read[0]["name"]), Some("a".to_owned()));
        assert!(dicts(&Value::from("no array")).is_empty());
    }
}
