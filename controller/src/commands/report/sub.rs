//! The other commands' JSON documents, kept whole in the report: doctor, status and events
//! through rdna1ctl's own entry point ([`crate::run`], in this process: what the binary would
//! print), verify as a child (see `watch`). No command module is imported (docs/ARCHITECTURE.md).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{json, Value};

use crate::sysroot::SysRoot;

/// One command's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct SubDoc {
    /// Its exit code (docs/CLI.md), or null if it did not end by itself.
    pub exit_code: Option<u8>,
    /// Its JSON document as it printed it, or null if it printed none.
    pub document: Option<Value>,
    /// Its error line (stderr), if it failed.
    pub error: Option<String>,
}

/// The schema of a [`SubDoc`] holding `command`'s answer: its `document` is any document of
/// that command (docs/schema/COMMAND.json) or an `error` document (docs/schema/error.json).
fn schema_of(g: &mut SchemaGenerator, command: &str) -> Schema {
    let mut s = SubDoc::json_schema(g);
    let document = json!({
        "description": format!(
            "rdna1ctl --json {command}'s document as it printed it (docs/schema/{command}.json), \
             or the error document it printed instead (docs/schema/error.json); null if it \
             printed none."
        ),
        "type": ["object", "null"],
        "properties": {"command": {"enum": [command, "error"]}},
        "required": ["schema_version", "command"],
    });
    if let Some(props) = s.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("document".into(), document);
    }
    s
}

/// `#[schemars(schema_with = ...)]` for the report's `doctor`.
pub fn doctor_schema(g: &mut SchemaGenerator) -> Schema {
    schema_of(g, "doctor")
}

/// `#[schemars(schema_with = ...)]` for the report's `status`.
pub fn status_schema(g: &mut SchemaGenerator) -> Schema {
    schema_of(g, "status")
}

/// `#[schemars(schema_with = ...)]` for a run's `verify`.
pub fn verify_schema(g: &mut SchemaGenerator) -> Schema {
    schema_of(g, "verify")
}

impl SubDoc {
    /// From a command's exit code, stdout (one JSON document) and stderr.
    pub fn from_output(exit_code: Option<u8>, out: &[u8], err: &[u8]) -> SubDoc {
        let text = String::from_utf8_lossy(out);
        let document = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str::<Value>(l).ok());
        let err = String::from_utf8_lossy(err);
        let error = match exit_code {
            Some(0) => None,
            _ => {
                let e: Vec<&str> = err
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                match e.is_empty() {
                    true => None,
                    false => Some(e.join("; ")),
                }
            }
        };
        SubDoc {
            exit_code,
            document,
            error,
        }
    }

    /// The document's field `key` as text.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.document.as_ref()?.get(key)?.as_str()
    }
}

/// `rdna1ctl --json --root ROOT ARGS` in this process.
pub fn run_json(root: &SysRoot, args: &[&str]) -> SubDoc {
    let mut argv: Vec<std::ffi::OsString> = vec!["rdna1ctl".into(), "--json".into()];
    argv.push("--root".into());
    argv.push(root.base().into());
    argv.extend(args.iter().map(Into::into));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = crate::run(argv, &mut out, &mut err, crate::Colors::default(), |_| {});
    SubDoc::from_output(Some(code), &out, &err)
}

/// The module's event log: how many events were logged so far, and the events from `since`
/// on (their `seq` at least `since`); `None` if it could not be read.
pub fn events_since(root: &SysRoot, since: u64) -> (SubDoc, Option<u64>, Vec<Value>) {
    let doc = run_json(root, &["events"]);
    let logged = doc
        .document
        .as_ref()
        .and_then(|d| d.get("logged")?.as_u64());
    let events = doc
        .document
        .as_ref()
        .and_then(|d| d.get("events")?.as_array())
        .map(|a| {
            a.iter()
                .filter(|e| {
                    e.get("seq")
                        .and_then(Value::as_u64)
                        .is_some_and(|s| s >= since)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    (doc, logged, events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_and_an_error_line() {
        let d = SubDoc::from_output(
            Some(5),
            b"{\"schema_version\":1,\"command\":\"error\",\"message\":\"x\"}\n",
            b"rdna1ctl: no module\n",
        );
        assert_eq!(d.str_field("command"), Some("error"));
        assert_eq!(d.error.as_deref(), Some("rdna1ctl: no module"));
        let d = SubDoc::from_output(Some(0), b"not json", b"warning\n");
        assert_eq!((d.document, d.error), (None, None));
    }

    #[test]
    fn status_and_doctor_on_a_fixture_in_this_process() {
        let root = SysRoot::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/rdna1-enforce"),
        );
        let s = run_json(&root, &["status"]);
        assert_eq!(s.exit_code, Some(0), "{s:?}");
        assert_eq!(s.str_field("command"), Some("status"));
        let (e, logged, events) = events_since(&root, 0);
        // No control device in a fixture: events is an error document, exit 5.
        assert_eq!(e.exit_code, Some(5), "{e:?}");
        assert_eq!((logged, events.len()), (None, 0));
    }
}
