//! `rdna1ctl check-kernel [KVER]`: can this kernel be hooked? (docs/CLI.md)

use std::io::Write;

use anyhow::Result;
use schemars::JsonSchema;
use serde::Serialize;

use crate::btf::contract::{Basis, Verdict};
use crate::btf::{self, Sources};
use crate::exit::Code;
use crate::{output, Ctx};

/// `rdna1ctl --json check-kernel` (docs/CLI.md, check-kernel).
#[derive(Serialize, JsonSchema)]
pub struct CheckKernelJson<'a> {
    /// The kernel release judged, as `uname -r` prints it.
    kver: &'a str,
    /// The module can hook it (exit code 0; else 3).
    hookable: bool,
    /// Where its BTF was read from; null when it was not.
    sources: Option<&'a Sources>,
    #[serde(flatten)]
    verdict: &'a Verdict,
}

pub fn run(ctx: &Ctx, kver: Option<&str>, out: &mut impl Write) -> Result<Code> {
    let kver = match kver {
        Some(k) => k.to_owned(),
        None => btf::running_release(&ctx.root)?,
    };
    let (verdict, sources) = btf::assess(&ctx.root, &kver);
    let hookable = verdict.hookable();
    if ctx.json {
        let doc = CheckKernelJson {
            kver: &kver,
            hookable,
            sources: sources.as_ref(),
            verdict: &verdict,
        };
        output::json("check-kernel", &doc, out)?;
    } else {
        render(out, &kver, sources.as_ref(), &verdict)?;
    }
    // Files that could not be read are no verdict on the kernel: an error, not a problem.
    Ok(match (hookable, verdict.basis) {
        (true, _) => Code::Ok,
        (false, Basis::Unreadable) => Code::Error,
        (false, _) => Code::Problems,
    })
}

fn render(out: &mut impl Write, kver: &str, sources: Option<&Sources>, v: &Verdict) -> Result<()> {
    if v.hookable() && v.basis == Basis::VerifiedSource {
        writeln!(out, "{kver}: hookable (no BTF: by its verified source)")?;
    } else if v.hookable() {
        writeln!(out, "{kver}: hookable")?;
    } else if v.basis == Basis::Unreadable {
        writeln!(
            out,
            "{kver}: cannot tell: its files could not be read (below); not hookable until they can"
        )?;
    } else {
        writeln!(out, "{kver}: NOT hookable")?;
    }
    if let Some(s) = sources {
        writeln!(
            out,
            "  amdgpu BTF: {} (id {})",
            s.amdgpu.display(),
            s.amdgpu_btf_id
        )?;
        writeln!(out, "  base BTF:   {}", s.base.display())?;
    }
    if let Some(p) = &v.prototype {
        writeln!(out, "  hook:       {p}")?;
    }
    if let Some(l) = &v.bo_layout {
        writeln!(out, "  bo layout:  {l}")?;
    }
    for (k, off) in &v.offsets {
        writeln!(out, "  {k:<40} {off}")?;
    }
    for n in &v.notes {
        writeln!(out, "  note: {n}")?;
    }
    for p in &v.problems {
        writeln!(out, "  problem: {p}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::testbtf::{kernel, Edit, DEBIAN};
    use crate::sysroot::SysRoot;

    /// A root where `kver` runs with amdgpu loaded: osrelease and /sys/kernel/btf.
    fn running(name: &str, kver: &str, e: Edit) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rdna1ctl-ck-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sys/kernel/btf")).unwrap();
        std::fs::create_dir_all(d.join("proc/sys/kernel")).unwrap();
        std::fs::write(d.join("proc/sys/kernel/osrelease"), format!("{kver}\n")).unwrap();
        let (base, split) = kernel(e);
        std::fs::write(d.join("sys/kernel/btf/vmlinux"), base).unwrap();
        std::fs::write(d.join("sys/kernel/btf/amdgpu"), split).unwrap();
        d
    }

    fn ctx(d: &std::path::Path, json: bool) -> Ctx {
        Ctx {
            root: SysRoot::new(d.to_path_buf()),
            json,
        }
    }

    #[test]
    fn running_kernel_is_read_from_sysfs() {
        let d = running("sysfs", "7.2.13+deb14-amd64", DEBIAN);
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(code, Code::Ok, "{text}");
        assert!(text.starts_with("7.2.13+deb14-amd64: hookable\n"), "{text}");
        assert!(text.contains("sys/kernel/btf/amdgpu"), "{text}");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn refusal_exits_3_and_json_names_the_problem() {
        let old = Edit {
            old_signature: true,
            ..DEBIAN
        };
        let d = running("json", "6.12.117+deb13-amd64", old);
        let mut out = Vec::new();
        let code = run(&ctx(&d, true), None, &mut out).unwrap();
        assert_eq!(code, Code::Problems);
        let doc =
            crate::schema::assert_printed_valid::<CheckKernelJson<'static>>("check-kernel", &out);
        assert_eq!(doc["command"], "check-kernel");
        assert_eq!(doc["hookable"], false);
        assert_eq!(doc["kver"], "6.12.117+deb13-amd64");
        let p = doc["problems"][0].as_str().unwrap();
        assert!(p.contains("pre-6.18"), "{p}");
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A root where `kver` is installed (not running): its image holds `base` (an ELF vmlinux,
    /// which an image may be) and its amdgpu.ko `split`.
    fn installed(name: &str, kver: &str, base: &[u8], split: &[u8]) -> std::path::PathBuf {
        use crate::btf::testbtf::elf_with_btf;
        let d = std::env::temp_dir().join(format!("rdna1ctl-ck-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let m = d.join(format!("usr/lib/modules/{kver}"));
        std::fs::create_dir_all(m.join("kernel/drivers/gpu/drm/amd/amdgpu")).unwrap();
        std::fs::write(m.join("vmlinuz"), elf_with_btf(base)).unwrap();
        std::fs::write(
            m.join("kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko"),
            elf_with_btf(split),
        )
        .unwrap();
        d
    }

    #[test]
    fn installed_kernel_is_read_from_its_files() {
        let (base, split) = kernel(DEBIAN);
        let d = installed("files", "7.1.13+deb13-amd64", &base, &split);
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), Some("7.1.13+deb13-amd64"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(code, Code::Ok, "{text}");
        assert!(
            text.contains("kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko"),
            "{text}"
        );
        // The id the DKMS build compiles in: of the module's .BTF section, as the running
        // kernel's /sys/kernel/btf/amdgpu would give it.
        let mut out = Vec::new();
        run(&ctx(&d, true), Some("7.1.13+deb13-amd64"), &mut out).unwrap();
        let doc =
            crate::schema::assert_printed_valid::<CheckKernelJson<'static>>("check-kernel", &out);
        let want = format!("{:#018x}", rdna1_mtype_shared::btf_id::btf_id(&split));
        assert_eq!(doc["sources"]["amdgpu_btf_id"], want.as_str());
        assert_eq!(
            (doc["basis"].as_str(), doc["hookable"].as_bool()),
            (Some("btf"), Some(true)),
            "{doc}"
        );
        assert!(
            doc["bo_layout"]
                .as_str()
                .is_some_and(|l| l.starts_with("size=")),
            "{doc}"
        );
        // And where amdgpu_vm keeps is_compute_context (kmod/dkms-make.sh passes it to the
        // build as RDNA1_BTF_VM_COMPUTE).
        assert_eq!(doc["offsets"]["amdgpu_vm.is_compute_context"], 3048);
        assert!(
            text.contains("  amdgpu_vm.is_compute_context             3048\n"),
            "{text}"
        );
        let r = running("id", "7.1.13+deb13-amd64", DEBIAN);
        let mut out = Vec::new();
        run(&ctx(&r, true), None, &mut out).unwrap();
        let doc =
            crate::schema::assert_printed_valid::<CheckKernelJson<'static>>("check-kernel", &out);
        assert_eq!(doc["sources"]["amdgpu_btf_id"], want.as_str());
        std::fs::remove_dir_all(r).unwrap();
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn without_btf_only_verified_releases_pass() {
        // ".BTG": an object without a .BTF section.
        let (base, _) = kernel(DEBIAN);
        let mut d = installed("nobtf", "7.2.13-amd64", &base, b"x");
        let ko = d.join("usr/lib/modules/7.2.13-amd64/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko");
        let mut elf = std::fs::read(&ko).unwrap();
        let at = elf.windows(5).position(|w| w == b".BTF\0").unwrap();
        elf[at + 3] = b'G';
        std::fs::write(&ko, &elf).unwrap();
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), Some("7.2.13-amd64"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(code, Code::Ok, "{text}");
        assert!(
            text.starts_with("7.2.13-amd64: hookable (no BTF: by its verified source)"),
            "{text}"
        );
        std::fs::remove_dir_all(&d).unwrap();

        d = installed("nobtf2", "6.19.14-amd64", &base, b"x");
        let ko =
            d.join("usr/lib/modules/6.19.14-amd64/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko");
        std::fs::write(&ko, &elf).unwrap();
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), Some("6.19.14-amd64"), &mut out).unwrap();
        assert_eq!(code, Code::Problems, "{}", String::from_utf8_lossy(&out));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn out_of_tree_amdgpu_is_refused_by_name() {
        // Installed: a module whose BTF has a distilled base. The ELF's string table section
        // renamed (same length) to .BTF.base is enough for the reader to see one.
        let (base, split) = kernel(DEBIAN);
        let d = installed("oot", "7.2.13+deb14-amd64", &base, &split);
        let ko = d
            .join("usr/lib/modules/7.2.13+deb14-amd64/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko");
        let mut elf = std::fs::read(&ko).unwrap();
        let at = elf.windows(10).position(|w| w == b".shstrtab\0").unwrap();
        elf[at..at + 10].copy_from_slice(b".BTF.base\0");
        std::fs::write(&ko, &elf).unwrap();
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), Some("7.2.13+deb14-amd64"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(code, Code::Problems, "{text}");
        assert!(text.contains("built out of tree"), "{text}");
        std::fs::remove_dir_all(&d).unwrap();

        // Running: the loaded amdgpu tainted out of tree.
        let d = running("oot-live", "7.2.13+deb14-amd64", DEBIAN);
        std::fs::create_dir_all(d.join("sys/module/amdgpu")).unwrap();
        std::fs::write(d.join("sys/module/amdgpu/taint"), "OE\n").unwrap();
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(code, Code::Problems, "{text}");
        assert!(text.contains("the loaded amdgpu is out of tree"), "{text}");
        // In tree (no taint letters): hookable.
        std::fs::write(d.join("sys/module/amdgpu/taint"), "\n").unwrap();
        let code = run(&ctx(&d, false), None, &mut Vec::new()).unwrap();
        assert_eq!(code, Code::Ok);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn kernel_not_installed_is_refused_with_why() {
        let d = running("absent", "7.2.13+deb14-amd64", DEBIAN);
        let mut out = Vec::new();
        let code = run(&ctx(&d, false), Some("7.9.0-1-amd64"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // No verdict on a kernel whose files are not there: it cannot tell (exit 1).
        assert_eq!(code, Code::Error);
        assert!(text.contains("7.9.0-1-amd64: cannot tell"), "{text}");
        assert!(
            text.contains("kernel 7.9.0-1-amd64 is not installed"),
            "{text}"
        );
        std::fs::remove_dir_all(d).unwrap();
    }
}
