//! Kernel timestamp ticks → nanoseconds. Pure, so the unit conversions and the counter
//! wrap-around are tested without a device.

use crate::runtime::KernelTiming;
use level_zero_sys::{
    ze_kernel_timestamp_data_t, ze_structure_type_t, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2,
};

const NS_PER_SEC: u128 = 1_000_000_000;

/// `ze_device_properties_t::timerResolution`, whose unit depends on the `stype` it was asked
/// with: spec 1.2 changed it from nanoseconds per cycle (an integer, so a 19.2 MHz clock read as
/// 52 ns instead of 52.083 ns) to cycles per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerResolution {
    /// Asked with `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES`.
    NsPerCycle(u64),
    /// Asked with `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2`.
    CyclesPerSec(u64),
}

impl TimerResolution {
    /// Reads `timerResolution` in the unit that the `stype` of the query implies.
    pub fn from_properties(stype: ze_structure_type_t, timer_resolution: u64) -> Self {
        if stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 {
            TimerResolution::CyclesPerSec(timer_resolution)
        } else {
            TimerResolution::NsPerCycle(timer_resolution)
        }
    }

    /// Zero means the driver reported no usable timer.
    pub fn is_zero(&self) -> bool {
        matches!(
            self,
            TimerResolution::NsPerCycle(0) | TimerResolution::CyclesPerSec(0)
        )
    }

    pub fn ns_per_tick(&self) -> f64 {
        match *self {
            TimerResolution::NsPerCycle(ns) => ns as f64,
            TimerResolution::CyclesPerSec(0) => 0.0,
            TimerResolution::CyclesPerSec(hz) => 1e9 / hz as f64,
        }
    }

    /// Integer arithmetic in 128 bits: exact, and no overflow for any 64-bit tick count.
    fn ticks_to_ns(&self, ticks: u128) -> u64 {
        let ns = match *self {
            TimerResolution::NsPerCycle(ns) => ticks * ns as u128,
            TimerResolution::CyclesPerSec(0) => 0,
            TimerResolution::CyclesPerSec(hz) => ticks * NS_PER_SEC / hz as u128,
        };
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

/// Converts one start/end pair of a `ze_kernel_timestamp_result_t` (its `global` or `context`
/// half) to nanoseconds.
///
/// Only the low `valid_bits` of each tick count are meaningful
/// (`ze_device_properties_t::kernelTimestampValidBits`); an end below the start means the
/// counter wrapped once during the kernel, so the end gains 2^valid_bits. A `valid_bits` of 0
/// (not reported) or 64 means the full 64 bits.
pub fn timestamp_ns(
    ticks: ze_kernel_timestamp_data_t,
    resolution: TimerResolution,
    valid_bits: u32,
) -> KernelTiming {
    let bits = if valid_bits == 0 {
        64
    } else {
        valid_bits.min(64)
    };
    let modulus = 1u128 << bits;
    let start = ticks.kernelStart as u128 % modulus;
    let mut end = ticks.kernelEnd as u128 % modulus;
    if end < start {
        end += modulus;
    }
    KernelTiming {
        start_ns: resolution.ticks_to_ns(start),
        end_ns: resolution.ticks_to_ns(end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use level_zero_sys::ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;

    fn ticks(start: u64, end: u64) -> ze_kernel_timestamp_data_t {
        ze_kernel_timestamp_data_t {
            kernelStart: start,
            kernelEnd: end,
        }
    }

    #[test]
    fn unit_follows_the_stype_of_the_query() {
        assert_eq!(
            TimerResolution::from_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, 83),
            TimerResolution::NsPerCycle(83)
        );
        assert_eq!(
            TimerResolution::from_properties(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, 12_000_000),
            TimerResolution::CyclesPerSec(12_000_000)
        );
    }

    #[test]
    fn ns_per_cycle_without_wrap() {
        let t = timestamp_ns(ticks(1_000, 1_500), TimerResolution::NsPerCycle(83), 32);
        assert_eq!(
            t,
            KernelTiming {
                start_ns: 83_000,
                end_ns: 124_500
            }
        );
        assert_eq!(t.duration_ns(), 41_500);
    }

    #[test]
    fn cycles_per_sec_without_wrap() {
        // 19.2 MHz: 192 ticks are exactly 10 µs, which ns-per-cycle integers cannot express.
        let t = timestamp_ns(ticks(0, 192), TimerResolution::CyclesPerSec(19_200_000), 36);
        assert_eq!(
            t,
            KernelTiming {
                start_ns: 0,
                end_ns: 10_000
            }
        );
        let t = timestamp_ns(
            ticks(12_000_000, 24_000_000),
            TimerResolution::CyclesPerSec(12_000_000),
            64,
        );
        assert_eq!(
            t,
            KernelTiming {
                start_ns: 1_000_000_000,
                end_ns: 2_000_000_000
            }
        );
        assert!((TimerResolution::CyclesPerSec(19_200_000).ns_per_tick() - 52.083333).abs() < 1e-5);
    }

    #[test]
    fn wrapped_counter_adds_two_to_the_valid_bits() {
        // A 32-bit counter that wrapped: 100 ticks before the wrap and 50 after.
        let start = (1u64 << 32) - 100;
        let t = timestamp_ns(ticks(start, 50), TimerResolution::NsPerCycle(2), 32);
        assert_eq!(t.duration_ns(), 150 * 2);
        assert_eq!(t.start_ns, start * 2);

        let t = timestamp_ns(
            ticks(start, 50),
            TimerResolution::CyclesPerSec(1_000_000_000),
            32,
        );
        assert_eq!(t.duration_ns(), 150);
    }

    #[test]
    fn bits_above_the_valid_ones_are_ignored() {
        // Garbage above bit 36 must not turn a 10-tick kernel into a wrap or a huge one.
        let high = 0xABCu64 << 52;
        let t = timestamp_ns(ticks(high | 5, 15), TimerResolution::NsPerCycle(1), 36);
        assert_eq!(
            t,
            KernelTiming {
                start_ns: 5,
                end_ns: 15
            }
        );
    }

    #[test]
    fn full_width_counters_never_overflow() {
        let t = timestamp_ns(
            ticks(u64::MAX - 1, u64::MAX),
            TimerResolution::NsPerCycle(1000),
            0,
        );
        assert_eq!(
            t,
            KernelTiming {
                start_ns: u64::MAX,
                end_ns: u64::MAX
            }
        );
        let t = timestamp_ns(
            ticks(u64::MAX - 1, 1),
            TimerResolution::CyclesPerSec(1_000_000_000),
            64,
        );
        assert_eq!(t.start_ns, u64::MAX - 1);
        assert_eq!(
            t.end_ns,
            u64::MAX,
            "the wrapped end saturates instead of overflowing"
        );
    }

    #[test]
    fn zero_resolution_reads_as_no_timer() {
        assert!(TimerResolution::CyclesPerSec(0).is_zero());
        let t = timestamp_ns(ticks(1, 2), TimerResolution::CyclesPerSec(0), 32);
        assert_eq!(t.duration_ns(), 0);
    }
}
