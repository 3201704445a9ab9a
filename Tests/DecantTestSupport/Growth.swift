import Foundation

/// How a piece of work grows with its size, for tests that promise linear (or bounded) work: a clock limit such as
/// "under 30 seconds" passes quadratic work at the size tested and fails linear work on a slow machine, while the
/// ratio of two timings, at n and 4n, tells the two apart on any machine (about 4 for linear work, about 16 for
/// quadratic). The timings are of the calling thread's CPU time, so other tests running alongside (Swift Testing
/// runs suites in parallel) and other processes on the machine do not count.
///
/// ```swift
/// let growth = Growth.ratio(from: 1_000) { count in _ = try parse(chain(count)) }
/// #expect(growth < 10, "4× the entities took \(growth)× the time")
/// ```
public enum Growth {
    /// The CPU time `body(factor × small)` takes on this thread over the time `body(small)` takes, each the shortest
    /// of `runs` runs.
    public static func ratio(
        from small: Int, factor: Int = 4, runs: Int = 3, _ body: (Int) throws -> Void
    ) rethrows -> Double {
        func shortest(_ size: Int) throws -> Double {
            var best = Double.infinity
            for _ in 0..<runs {
                let start = threadCPUTime()
                try body(size)
                best = min(best, threadCPUTime() - start)
            }
            return max(best, 1)
        }
        let base = try shortest(small)
        return try shortest(small * factor) / base
    }

    /// The CPU time this thread has used, in nanoseconds.
    static func threadCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
    }
}
