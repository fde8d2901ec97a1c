//! The `rdna1_mtype` kernel module as the controller sees it: its sysfs parameters
//! ([`params`]), its control device and ioctl ABI ([`control`]), and what its state means
//! for each GPU ([`verdict`]).

pub mod control;
pub mod params;
pub mod verdict;
