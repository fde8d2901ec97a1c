//! The `rdna1_mtype` kernel module as the controller sees it: its sysfs parameters
//! ([`params`]), its control device and ioctl ABI ([`control`]), its counters in JSON
//! ([`counters`]), and what its state means
//! for each GPU ([`verdict`]).

pub mod control;
pub mod counters;
pub mod params;
pub mod verdict;
