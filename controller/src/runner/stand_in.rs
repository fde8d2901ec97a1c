//! Test only: a CUDA build of PyTorch standing for a ROCm one, so the whole search (arms,
//! checks, bypass, keep, re-run) can be proven on an NVIDIA GPU (tests/device/search-gpu.sh;
//! cuDNN stands for MIOpen there). Compiled in only with the cargo feature
//! `cuda-stands-for-rocm`, which no package, install or `make` target turns on. NVIDIA has no
//! KFD, so the proof that a run used the GPU is then the check's own record (torch.cuda was
//! initialised, ops seen on the GPU), not /dev/kfd.

/// Whether this build lets a CUDA build stand for ROCm.
pub const CUDA_FOR_ROCM: bool = cfg!(feature = "cuda-stands-for-rocm");

/// Whether a torch with these versions is taken as a GPU build of ROCm's.
pub fn is_rocm(hip: Option<&str>, cuda: Option<&str>) -> bool {
    hip.is_some() || (CUDA_FOR_ROCM && cuda.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_test_build_takes_cuda_for_rocm() {
        assert!(is_rocm(Some("6.4.43484"), None));
        assert!(!is_rocm(None, None));
        assert_eq!(is_rocm(None, Some("13.0")), CUDA_FOR_ROCM);
    }
}
