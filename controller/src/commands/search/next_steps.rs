//! When no configuration passed: what to do next, the most likely first (docs/CLI.md,
//! search, cites each source). doctor's findings come first: a stack that cannot work is no
//! search's to cure. Then the stacks reported to work on RDNA1, float32 where float16 failed,
//! the per-GPU override on a host with several GPUs, and what to send to whom.

use super::json::ArmJson;

/// The next steps, from the runs and doctor's fixes (its checks that are not ok).
pub fn next_steps(arms: &[ArmJson], doctor_fixes: &[String]) -> Vec<String> {
    let mut v: Vec<String> = doctor_fixes
        .iter()
        .map(|f| format!("doctor: {f}"))
        .collect();
    let ran = |id: &str| arms.iter().any(|a| a.arm.id == id && a.record.is_some());
    let text: String = arms
        .iter()
        .filter_map(|a| a.failure.as_deref())
        .collect::<Vec<_>>()
        .join("\n");
    let no_code = text.contains("no code for") || text.contains("invalid device function");
    v.push(
        "Use a PyTorch built with gfx1010 code: TheRock's gfx101X nightly wheels (TheRock PR \
         #4159), or Arch's python-pytorch-rocm. PyTorch's own ROCm wheels from pytorch.org carry \
         no gfx1010 code (pytorch #132570): they cannot work on RDNA1."
            .into(),
    );
    v.push(
        "On a gfx1011 or gfx1012 (RX 5500, 5300, Pro W5500/5300), with libraries that have \
         gfx1010 code: HSA_OVERRIDE_GFX_VERSION=10.1.0 (ROCm #887: an RX 5700 class card \
         training). Never 10.3.0 on RDNA1: that is another ISA."
            .into(),
    );
    if no_code {
        v.push(
            "rocBLAS: ROCm 6.1 or later (the Tensile lazy-loading fix for gfx1010, Tensile \
             #1862 and #1897)."
                .into(),
        );
    }
    let half_failed = arms.iter().any(|a| {
        a.battery
            .as_ref()
            .and_then(|b| b.get("half_ok"))
            .and_then(serde_json::Value::as_bool)
            == Some(false)
    });
    if half_failed {
        v.push(
            "Train in float32: the battery's float16 cases failed (fp16 convolutions fault on \
             RDNA1: ComfyUI PR #15615)."
                .into(),
        );
    }
    if ran("only-rdna1-visible") {
        v.push(
            "On this host with several GPUs, give the RDNA1 GPU its own override: \
             HSA_OVERRIDE_GFX_VERSION_<N>=10.1.0, N being its KFD node number (libhsakmt \
             reads the per-node variable before HSA_OVERRIDE_GFX_VERSION)."
                .into(),
        );
    }
    v.push(
        "To ask for help: `sudo -E rdna1ctl search --all --json > search.json` holds every \
         run, its log's tail and what was tried. A fault in a MIOpen solver belongs to MIOpen's \
         issues (github.com/ROCm/rocm-libraries, with the MIOpenDriver line from the log); a \
         stack your distribution ships, to its ROCm packagers. rdna1-mtype has no tracker of \
         its own to send it to."
            .into(),
    );
    v
}
