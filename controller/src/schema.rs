//! The JSON Schema of every `--json` document, derived from the output types (schemars): the
//! command's fields with the envelope's beside them (docs/CLI.md, "JSON"). The list of
//! documents is `commands::schemas`; the files are docs/schema/NAME.json, kept current by
//! controller/tests/schema.rs.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Value};

use crate::output::{JsonNames, JSON_SCHEMA_VERSION};

/// A string that is one of `names` (and, `nullable`, null).
pub fn names(names: impl IntoIterator<Item = &'static str>, nullable: bool) -> Schema {
    let mut list: Vec<Value> = names.into_iter().map(Value::from).collect();
    let ty = match nullable {
        true => {
            list.push(Value::Null);
            json!(["string", "null"])
        }
        false => json!("string"),
    };
    schemars::json_schema!({"type": ty, "enum": list})
}

/// `#[schemars(schema_with = "crate::schema::one_of::<E>")]`: a field `E::json_name()`
/// fills; its `enum` is every value of `E`, so it cannot drift from what is printed.
pub fn one_of<E: JsonNames>(_: &mut SchemaGenerator) -> Schema {
    names(E::every().iter().map(E::json_name), false)
}

/// [`one_of`] or null: an `Option` field.
pub fn one_of_or_null<E: JsonNames>(_: &mut SchemaGenerator) -> Schema {
    names(E::every().iter().map(E::json_name), true)
}

/// A map with a count for every value of `E`, by its `json_name()`: a field such as a counter
/// set's `skipped`, which always holds every one (zeros included).
pub fn counts_by<E: JsonNames>(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = E::every().iter().map(E::json_name).collect();
    let count = json!({"type": "integer", "format": "uint64", "minimum": 0});
    let props: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| ((*n).to_owned(), count.clone()))
        .collect();
    schemars::json_schema!({
        "type": "object",
        "properties": props,
        "required": names,
        "additionalProperties": count,
    })
}

/// An array of [`one_of`]: a `Vec` field.
pub fn list_of<E: JsonNames>(g: &mut SchemaGenerator) -> Schema {
    let items = one_of::<E>(g);
    schemars::json_schema!({"type": "array", "items": items})
}

/// The schema of the document whose `command` is `command` and whose fields are `T`'s.
pub fn document<T: JsonSchema>(command: &'static str) -> (&'static str, Value) {
    // The serialize contract: a field is required unless serde may leave it out, so an Option
    // is required and may be null (rdna1ctl never omits a field: docs/CLI.md, "JSON").
    let schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut v = schema.to_value();
    if let Some(doc) = v.as_object_mut() {
        doc.insert("title".into(), json!(format!("rdna1ctl --json {command}")));
        let props = doc.entry("properties").or_insert_with(|| json!({}));
        if let Some(props) = props.as_object_mut() {
            props.insert(
                "schema_version".into(),
                json!({
                    "description": "Raised on any incompatible change (docs/CLI.md, \"JSON\").",
                    "const": JSON_SCHEMA_VERSION,
                }),
            );
            props.insert(
                "command".into(),
                json!({"description": "Which document this is.", "const": command}),
            );
            props.insert(
                "root".into(),
                json!({
                    "description": "The directory read instead of / (--root, RDNA1CTL_ROOT); \
                                    absent for /.",
                    "type": "string",
                }),
            );
        }
        let required = doc.entry("required").or_insert_with(|| json!([]));
        if let Some(r) = required.as_array_mut() {
            r.insert(0, json!("command"));
            r.insert(0, json!("schema_version"));
        }
    }
    (command, v)
}

/// Panics unless `body`, printed as the `command` document, is valid under its schema: for the
/// documents the fixture runs of controller/tests/schema.rs cannot make (they need the
/// module's device).
#[cfg(test)]
pub fn assert_valid<T: JsonSchema + serde::Serialize>(command: &'static str, body: &T) {
    let mut out = Vec::new();
    crate::output::json(command, body, &mut out).unwrap();
    assert_printed_valid::<T>(command, &out);
}

/// Panics unless `out`, what a command printed under `--json`, is one `command` document
/// valid under the schema of `T`, its body type; returns the document.
#[cfg(test)]
pub fn assert_printed_valid<T: JsonSchema>(command: &'static str, out: &[u8]) -> Value {
    let text = String::from_utf8_lossy(out);
    assert_eq!(text.lines().count(), 1, "one document: {text}");
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(doc["command"], command, "{doc}");
    let (_, schema) = document::<T>(command);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{command}: {errors:?}\n{doc}");
    doc
}

/// The `enum` at `pointer` (`/properties/mode`) of `T`'s schema, as strings (`null` for
/// null), for tests that compare a value list with the enum it comes from.
#[cfg(test)]
pub fn enum_values<T: JsonSchema>(pointer: &str) -> Vec<String> {
    let (_, s) = document::<T>("test");
    let list = s
        .pointer(&format!("{pointer}/enum"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no enum at {pointer}: {s}"));
    list.iter()
        .map(|v| v.as_str().unwrap_or("null").to_owned())
        .collect()
}

/// Every value the schema at `pointer` of `T`'s allows, whatever its form (`enum`, `const`,
/// `oneOf`/`anyOf` of those, `$ref`, `{"type": "null"}`), as strings (`null` for null).
#[cfg(test)]
pub fn enum_values_any<T: JsonSchema>(pointer: &str) -> Vec<String> {
    fn walk(root: &Value, s: &Value, out: &mut Vec<String>) {
        let name = |v: &Value| v.as_str().unwrap_or("null").to_owned();
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let target = root.pointer(r.trim_start_matches('#')).expect("a $ref");
            walk(root, target, out);
        }
        if let Some(list) = s.get("enum").and_then(Value::as_array) {
            out.extend(list.iter().map(name));
        }
        if let Some(c) = s.get("const") {
            out.push(name(c));
        }
        if s.get("type") == Some(&json!("null")) {
            out.push("null".into());
        }
        for k in ["oneOf", "anyOf"] {
            for sub in s.get(k).and_then(Value::as_array).into_iter().flatten() {
                walk(root, sub, out);
            }
        }
    }
    let (_, s) = document::<T>("test");
    let at = s
        .pointer(pointer)
        .unwrap_or_else(|| panic!("nothing at {pointer}: {s}"));
    let mut out = Vec::new();
    walk(&s, at, &mut out);
    assert!(!out.is_empty(), "no values at {pointer}: {s}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema, serde::Serialize)]
    struct B {
        x: u32,
        y: Option<String>,
    }

    #[test]
    fn the_envelope_is_in_every_schema() {
        let (name, s) = document::<B>("thing");
        assert_eq!(name, "thing");
        assert_eq!(s["title"], "rdna1ctl --json thing");
        assert_eq!(s["properties"]["command"]["const"], "thing");
        assert_eq!(
            s["properties"]["schema_version"]["const"],
            JSON_SCHEMA_VERSION
        );
        assert_eq!(s["properties"]["x"]["type"], "integer");
        let required = s["required"].as_array().unwrap();
        for k in ["schema_version", "command", "x", "y"] {
            assert!(required.contains(&json!(k)), "{k} required: {s}");
        }
        assert!(!required.contains(&json!("root")), "{s}");
        assert_valid("thing", &B { x: 1, y: None });
    }

    #[test]
    #[should_panic(expected = "thing")]
    fn an_invalid_document_is_refused() {
        #[derive(serde::Serialize)]
        struct Wrong {
            x: &'static str,
        }
        impl JsonSchema for Wrong {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                "Wrong".into()
            }
            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                B::json_schema(g)
            }
        }
        assert_valid("thing", &Wrong { x: "1" });
    }
}
