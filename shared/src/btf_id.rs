//! The identity of an amdgpu build: FNV-1a (64 bit) over its `.BTF` section, the bytes
//! `rdna1ctl check-kernel` checked the contract on. The DKMS build compiles the id of the
//! amdgpu it checked into the module (`kmod/dkms-make.sh`), and the module refuses to arm on
//! an amdgpu whose BTF has another id (`kmod/hook.c`): a module rebuilt or replaced after the
//! check (amdgpu-dkms installed later, say) is not the one the check spoke for. The same
//! bytes are in the module file, in the loaded module (`mod->btf_data` while it is coming)
//! and in `/sys/kernel/btf/amdgpu`. FNV-1a because it needs no kernel crypto and this guards
//! against a different build, not an adversary: whoever can load modules can load anything.

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// The id of a module whose `.BTF` section is `bytes`.
pub fn btf_id(bytes: &[u8]) -> u64 {
    let mut h = OFFSET_BASIS;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::btf_id;

    #[test]
    fn matches_the_published_fnv1a_64_vectors() {
        // From the FNV reference test suite (draft-eastlake-fnv, FNV-1a 64).
        assert_eq!(btf_id(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(btf_id(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(btf_id(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
