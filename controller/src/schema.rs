//! The JSON Schema of every `--json` document, derived from the output types (schemars): the
//! command's fields with the envelope's beside them (docs/CLI.md, "JSON"). The list of
//! documents is `commands::schemas`; the files are docs/schema/NAME.json, kept current by
//! controller/tests/schema.rs.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};

use crate::output::JSON_SCHEMA_VERSION;

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
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let (_, schema) = document::<T>(command);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{command}: {errors:?}\n{doc}");
}

/// The `enum` at `pointer` (`/properties/mode`) of `T`'s schema, as strings (`null` for
/// null), for tests that hold a hand-written list to the shared enum it copies.
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
