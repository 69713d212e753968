//! [`Json`]: the serde shape the protocols' wire types read their fields through, which never
//! fails on a wrong JSON type and never quotes a value.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// One JSON value as the wire types read a field: an object is read as `O`, an array as a list
/// of `A`, a scalar keeps its value; anything else is kept only as its JSON type. Reading a
/// value as `Json` never fails on a wrong type, so the protocol code reports a wrong type by
/// the field's name and the JSON type it found ("'location' is a JSON number, expected a
/// string"), never by quoting the value, which may be a credential.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Json<O = IgnoredAny, A = IgnoredAny> {
    /// `null` (also what a missing field defaults to).
    #[default]
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<A>),
    /// An object.
    Object(O),
}

/// Any JSON value, kept as its type and, for scalars, its value.
pub(crate) type Scalar = Json;

/// A JSON object of scalars, e.g. `storage_options` (sorted by key, as `serde_json` keeps them).
pub(crate) type ScalarMap = std::collections::BTreeMap<String, Scalar>;

impl<O, A> Json<O, A> {
    /// The JSON type, for messages: `null`, `boolean`, `number`, `string`, `array`, `object`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// The text of a string, number or boolean (some catalogs send codes as numbers).
    pub(crate) fn text(self) -> Option<String> {
        match self {
            Json::String(s) => Some(s),
            Json::Number(n) => Some(n.to_string()),
            Json::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A string field: `None` for `null` or missing, an error naming `field` and the JSON type
    /// for anything but a string.
    pub(crate) fn optional_string(
        self,
        field: &str,
    ) -> std::result::Result<Option<String>, String> {
        match self {
            Json::Null => Ok(None),
            Json::String(s) => Ok(Some(s)),
            other => Err(format!(
                "'{field}' is a JSON {}, expected a string",
                other.kind()
            )),
        }
    }
}

impl<A> Json<ScalarMap, A> {
    /// A JSON object of strings (numbers and booleans are accepted as their text; `null`
    /// values are skipped); `None` for `null` or missing. Messages name `field` and keys,
    /// never values.
    pub(crate) fn string_map(
        self,
        field: &str,
    ) -> std::result::Result<Option<crate::options::StorageOptions>, String> {
        let map = match self {
            Json::Null => return Ok(None),
            Json::Object(map) => map,
            other => {
                return Err(format!(
                    "'{field}' is a JSON {}, expected an object of strings",
                    other.kind()
                ))
            }
        };
        let mut out = crate::options::StorageOptions::with_capacity(map.len());
        for (k, v) in map {
            match v {
                Json::Null => {}
                Json::Array(_) | Json::Object(_) => {
                    return Err(format!(
                        "'{field}.{k}' is a JSON {}, expected a string",
                        v.kind()
                    ))
                }
                scalar => {
                    if let Some(text) = scalar.text() {
                        out.insert(k, text);
                    }
                }
            }
        }
        Ok(Some(out))
    }
}

impl<'de, O: Deserialize<'de>, A: Deserialize<'de>> Deserialize<'de> for Json<O, A> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor(PhantomData))
    }
}

struct JsonVisitor<O, A>(PhantomData<fn() -> (O, A)>);

impl<'de, O: Deserialize<'de>, A: Deserialize<'de>> Visitor<'de> for JsonVisitor<O, A> {
    type Value = Json<O, A>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Self::Value, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(Json::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Self::Value, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<S: SeqAccess<'de>>(
        self,
        mut seq: S,
    ) -> std::result::Result<Self::Value, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<A>()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> std::result::Result<Self::Value, M::Error> {
        O::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Json::Object)
    }
}
