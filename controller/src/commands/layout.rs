//! `rdna1ctl layout [--apply]`: the module's `amdgpu_bo` layout beside the one this kernel's
//! module BTF gives; without that BTF, the module's alone, said to be unchecked.

use std::io::Write;

use anyhow::{bail, Context, Result};
use rdna1_mtype_shared::bo::BoLayout;
use schemars::JsonSchema;
use serde::Serialize;

use crate::btf;
use crate::btf::layout::AMDGPU_BTF;
use crate::exit::{coded, Code};
use crate::module::params::{self, ModuleState};
use crate::output::{self, ModuleLayoutJson};
use crate::sysroot::SysRoot;
use crate::Ctx;

/// `rdna1ctl layout --json` (docs/CLI.md, layout).
#[derive(Serialize, JsonSchema)]
pub struct LayoutJson {
    /// The layout from this kernel's module BTF (/sys/kernel/btf/amdgpu), `size=N
    /// preferred_domains=N tbo=N flags=N`; null when there is none (`btf_unavailable` says why).
    btf: Option<String>,
    /// Why there is no BTF layout, with what to do; null when there is one.
    btf_unavailable: Option<String>,
    /// The module's, before --apply; null if it is not loaded.
    module: Option<ModuleLayoutJson>,
    /// The module's layout equals the BTF's; null when they cannot be compared (no BTF, the
    /// module not loaded or without a layout).
    matches: Option<bool>,
    /// The module's after --apply; null without --apply.
    applied: Option<ModuleLayoutJson>,
}

/// Why `root` has no amdgpu module BTF, if it has none.
fn btf_unavailable(root: &SysRoot) -> Option<String> {
    let path = root.path(AMDGPU_BTF);
    if path.exists() {
        return None;
    }
    Some(match root.path("/sys/module/amdgpu").is_dir() {
        true => format!(
            "{} does not exist although amdgpu is loaded: this kernel was built without module \
             BTF (CONFIG_DEBUG_INFO_BTF_MODULES)",
            path.display()
        ),
        false => format!(
            "{} does not exist: amdgpu is not loaded (load it), or this kernel has no module \
             BTF (CONFIG_DEBUG_INFO_BTF_MODULES)",
            path.display()
        ),
    })
}

/// `layout` or `none`, as text shows a module's.
fn text(l: Option<BoLayout>) -> String {
    l.map_or_else(|| "none".to_owned(), |l| l.to_string())
}

pub fn run(ctx: &Ctx, apply: bool, out: &mut impl Write) -> Result<()> {
    let root = &ctx.root;
    let unavailable = btf_unavailable(root);
    let layout = match &unavailable {
        None => Some(btf::layout::from_sysfs(root)?),
        Some(why) if apply => {
            return Err(coded(
                Code::Error,
                format!(
                    "layout --apply: no layout to apply: {why}; the module keeps its own \
                     (`rdna1ctl layout` shows it)"
                ),
            ));
        }
        Some(_) => None,
    };
    let module = match params::read(root)? {
        ModuleState::Loaded(m) => Some(m),
        ModuleState::NotLoaded if apply => {
            return Err(coded(
                Code::NoModule,
                "rdna1_mtype is not loaded: load it first (sudo modprobe rdna1_mtype)",
            ));
        }
        ModuleState::NotLoaded => match &unavailable {
            // Nothing to show: neither layout exists.
            Some(why) => {
                return Err(coded(
                    Code::NoModule,
                    format!(
                        "rdna1_mtype is not loaded and there is no BTF layout ({why}): load the \
                         module (sudo modprobe rdna1_mtype) to see the layout it uses"
                    ),
                ));
            }
            None => None,
        },
    };
    let matches = match (layout, module.as_ref().and_then(|m| m.bo_layout)) {
        (Some(b), Some(m)) => Some(b == m),
        _ => None,
    };
    let mut doc = LayoutJson {
        btf: layout.map(|l| l.to_string()),
        btf_unavailable: unavailable.clone(),
        module: module.as_ref().map(Into::into),
        matches,
        applied: None,
    };
    if !ctx.json {
        match (&layout, &unavailable) {
            (Some(l), _) => writeln!(out, "amdgpu_bo layout from BTF: {l}")?,
            (None, Some(why)) => writeln!(out, "amdgpu_bo layout from BTF: none: {why}")?,
            (None, None) => {}
        }
        if let Some(m) = &module {
            writeln!(
                out,
                "module's layout:           {} ({}, {})",
                text(m.bo_layout),
                m.bo_layout_status,
                m.bo_layout_source
            )?;
        }
        match (matches, &unavailable) {
            (Some(true), _) => writeln!(out, "the module's layout is this kernel's")?,
            (Some(false), _) => writeln!(
                out,
                "the module's layout DIFFERS from this kernel's: `sudo rdna1ctl layout --apply` \
                 gives it the kernel's"
            )?,
            (None, Some(_)) => writeln!(
                out,
                "warning: not checked: without amdgpu's module BTF the module's layout cannot be \
                 compared with the running kernel's struct amdgpu_bo"
            )?,
            (None, None) => {}
        }
    }
    if let (true, Some(layout)) = (apply, layout) {
        params::write_bo_layout(root, &layout.to_string())?;
        let ModuleState::Loaded(after) = params::read(root)? else {
            bail!("rdna1_mtype was unloaded while applying the layout");
        };
        if !ctx.json {
            writeln!(
                out,
                "applied; module now reads: {} ({})",
                text(after.bo_layout),
                after.bo_layout_status
            )
            .context("printing")?;
        }
        doc.applied = Some((&after).into());
    }
    if ctx.json {
        output::json("layout", &doc, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::layout::tests::{write_pair, LAYOUT};
    use crate::sysroot::SysRoot;

    #[test]
    fn json_has_the_btf_and_the_module_layouts() {
        let root =
            std::env::temp_dir().join(format!("rdna1ctl-layout-json-{}", std::process::id()));
        let btf = root.join("sys/kernel/btf");
        std::fs::create_dir_all(&btf).unwrap();
        write_pair(&btf, LAYOUT, true);
        let ctx = Ctx {
            root: SysRoot::new(root.clone()),
            json: true,
        };
        let mut v = Vec::new();
        run(&ctx, false, &mut v).unwrap();
        let doc = crate::schema::assert_printed_valid::<LayoutJson>("layout", &v);
        assert_eq!(doc["command"], "layout");
        assert_eq!(doc["btf"], LAYOUT.to_string());
        assert!(doc["module"].is_null(), "no module loaded: {doc}");
        // --apply without the module: exit 5, nothing written.
        let e = run(&ctx, true, &mut Vec::new()).unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::NoModule);
        std::fs::remove_dir_all(root).unwrap();
    }

    /// A copy of the rdna1-enforce fixture (module loaded, layout set, no module BTF) in a
    /// directory of its own.
    fn enforce_copy(name: &str) -> std::path::PathBuf {
        fn copy(from: &std::path::Path, to: &std::path::Path) {
            std::fs::create_dir_all(to).unwrap();
            for e in std::fs::read_dir(from).unwrap() {
                let e = e.unwrap();
                let (src, dst) = (e.path(), to.join(e.file_name()));
                match e.file_type().unwrap().is_dir() {
                    true => copy(&src, &dst),
                    false => {
                        std::fs::copy(&src, &dst).unwrap();
                    }
                }
            }
        }
        let root =
            std::env::temp_dir().join(format!("rdna1ctl-layout-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/rdna1-enforce/sys/module");
        copy(&fixture, &root.join("sys/module"));
        root
    }

    fn run_on(root: &std::path::Path, json: bool, apply: bool) -> (Result<()>, String) {
        let ctx = Ctx {
            root: SysRoot::new(root.to_path_buf()),
            json,
        };
        let mut v = Vec::new();
        let r = run(&ctx, apply, &mut v);
        (r, String::from_utf8(v).unwrap())
    }

    #[test]
    fn without_btf_the_modules_layout_is_shown_and_said_unchecked() {
        let root = enforce_copy("nobtf");
        let (r, text) = run_on(&root, false, false);
        r.unwrap();
        assert!(text.contains("amdgpu_bo layout from BTF: none: "), "{text}");
        assert!(text.contains("amdgpu is not loaded"), "{text}");
        assert!(
            text.contains("module's layout:           size=1336 preferred_domains=0 tbo=56 flags=1240 (ok, set)"),
            "{text}"
        );
        assert!(
            text.contains("warning: not checked: without amdgpu's module BTF"),
            "{text}"
        );
        // amdgpu loaded: then the kernel has no module BTF.
        std::fs::create_dir_all(root.join("sys/module/amdgpu")).unwrap();
        let (r, json) = run_on(&root, true, false);
        r.unwrap();
        let doc = crate::schema::assert_printed_valid::<LayoutJson>("layout", json.as_bytes());
        assert!(doc["btf"].is_null() && doc["matches"].is_null(), "{doc}");
        assert!(
            doc["btf_unavailable"]
                .as_str()
                .unwrap()
                .contains("built without module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)"),
            "{doc}"
        );
        assert_eq!(doc["module"]["source"], "set");
        // --apply has nothing to apply: refused, nothing written.
        let before =
            std::fs::read(root.join("sys/module/rdna1_mtype/parameters/bo_layout")).unwrap();
        let (r, _) = run_on(&root, false, true);
        let e = r.unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::Error);
        assert!(
            format!("{e}").contains("CONFIG_DEBUG_INFO_BTF_MODULES"),
            "{e}"
        );
        assert_eq!(
            std::fs::read(root.join("sys/module/rdna1_mtype/parameters/bo_layout")).unwrap(),
            before
        );
        // Neither the module nor BTF: nothing to show.
        std::fs::remove_dir_all(root.join("sys/module/rdna1_mtype")).unwrap();
        let e = run_on(&root, false, false).0.unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::NoModule);
        assert!(format!("{e}").contains("sudo modprobe rdna1_mtype"), "{e}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn with_btf_the_two_layouts_are_compared() {
        let root = enforce_copy("cmp");
        let btf = root.join("sys/kernel/btf");
        std::fs::create_dir_all(&btf).unwrap();
        // The fixture's module layout is size=1336 preferred_domains=0 tbo=56 flags=1240.
        let same = rdna1_mtype_shared::bo::BoLayout::parse(
            b"size=1336 preferred_domains=0 tbo=56 flags=1240",
        )
        .unwrap();
        write_pair(&btf, same, true);
        let (r, text) = run_on(&root, false, false);
        r.unwrap();
        assert!(
            text.contains("the module's layout is this kernel's"),
            "{text}"
        );
        let (_, json) = run_on(&root, true, false);
        let doc = crate::schema::assert_printed_valid::<LayoutJson>("layout", json.as_bytes());
        assert_eq!(doc["matches"], true, "{doc}");
        assert!(doc["btf_unavailable"].is_null());
        let other = rdna1_mtype_shared::bo::BoLayout { size: 1344, ..same };
        write_pair(&btf, other, true);
        let (_, text) = run_on(&root, false, false);
        assert!(text.contains("DIFFERS"), "{text}");
        std::fs::remove_dir_all(root).unwrap();
    }
}
